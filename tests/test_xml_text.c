/* test_xml_text.c — finding and changing attribute bytes of an XML text (io/xml_text.h).
 *
 * The text below has what real robot files have: a comment holding a fake tag, several elements
 * of one name on one line, single quotes, a tag split over lines, a DOCTYPE with an internal
 * subset and a CDATA section; every edit must change exactly the bytes it names. */
#include <check.h>
#include <string.h>

#include <libxml/tree.h>

#include "xml_text.h"

Suite *xml_text_suite(void);

static const char doc_text[] =
    "<?xml version=\"1.0\"?>\n"
    "<!DOCTYPE robot [ <!ENTITY x \"1\"> ]>\n"
    "<robot name='r'>\n"
    "  <!-- <link name=\"fake\"> in a comment -->\n"
    "  <link name=\"a\"><inertial><mass value=\"1.5\"/></inertial></link><link name=\"b\"/>\n"
    "  <![CDATA[ <link name=\"cdata\"/> ]]>\n"
    "  <joint name=\"j\"\n"
    "         type='revolute'>\n"
    "    <origin xyz=\"0  0.1\t-2e-1\" rpy=\"0 0 0\"/>\n"
    "    <axis/>\n"
    "  </joint>\n"
    "</robot>\n";

static xmlNode *find(xmlNode *x, const char *tag, const char *name)
{
    for (; x; x = x->next) {
        if (x->type != XML_ELEMENT_NODE) continue;
        if (!strcmp((const char *)x->name, tag)) {
            xmlChar *n = xmlGetProp(x, (const xmlChar *)"name");
            int same = !name || (n && !strcmp((const char *)n, name));
            xmlFree(n);
            if (same) return x;
        }
        xmlNode *c = find(x->children, tag, name);
        if (c) return c;
    }
    return NULL;
}

static xmlDoc *parse(void)
{
    sid_error err = { 0 };
    xmlDoc *d = xml_text_parse("t.urdf", doc_text, strlen(doc_text), &err);
    ck_assert_msg(d != NULL, "%s", err.msg);
    return d;
}

START_TEST(test_spans)
{
    xmlDoc *d = parse();
    xmlNode *root = xmlDocGetRootElement(d);
    size_t s, e;
    const size_t len = strlen(doc_text);
    ck_assert_int_eq(xml_attr_span(doc_text, len, find(root, "link", "b"), "name", &s, &e), 1);
    ck_assert_int_eq((int)(e - s), 1);
    ck_assert_int_eq(doc_text[s], 'b');
    ck_assert_int_eq(xml_attr_span(doc_text, len, find(root, "mass", NULL), "value", &s, &e), 1);
    ck_assert(!strncmp(doc_text + s, "1.5\"", 4));
    ck_assert_int_eq(xml_attr_span(doc_text, len, find(root, "joint", "j"), "type", &s, &e), 1);
    ck_assert(!strncmp(doc_text + s, "revolute'", 9));
    ck_assert_int_eq(xml_attr_span(doc_text, len, find(root, "axis", NULL), "xyz", &s, &e), 0);
    ck_assert_int_eq(xml_element_span(doc_text, len, find(root, "joint", "j"), &s, &e), 0);
    ck_assert(!strncmp(doc_text + s, "<joint name", 11));
    ck_assert(!strncmp(doc_text + e - 8, "</joint>", 8));
    ck_assert_int_eq(xml_element_span(doc_text, len, find(root, "link", "b"), &s, &e), 0);
    ck_assert(!strncmp(doc_text + s, "<link name=\"b\"/>", e - s));
    ck_assert_int_eq((int)(e - s), 16);
    xmlFreeDoc(d);
}
END_TEST

START_TEST(test_edits_change_only_their_bytes)
{
    xmlDoc *d = parse();
    xmlNode *root = xmlDocGetRootElement(d);
    const size_t len = strlen(doc_text);
    xml_edits *e = xml_edits_new();
    const double v[3] = { 0, 0.25, -0.2 };
    const unsigned char changed[3] = { 0, 1, 0 };
    ck_assert_int_eq(xml_edits_set_numbers(e, doc_text, len, find(root, "origin", NULL), "xyz", 3, v, changed), 0);
    ck_assert_int_eq(xml_edits_set_attr(e, doc_text, len, find(root, "mass", NULL), "value", "2"), 0);
    ck_assert_int_eq(xml_edits_set_attr(e, doc_text, len, find(root, "axis", NULL), "xyz", "0 0 1"), 0);
    ck_assert_int_eq(xml_edits_remove_attr(e, doc_text, len, find(root, "origin", NULL), "rpy"), 0);
    char *out;
    size_t olen;
    ck_assert_int_eq(xml_edits_apply(e, doc_text, len, &out, &olen), 0);
    const char *want =
        "<?xml version=\"1.0\"?>\n"
        "<!DOCTYPE robot [ <!ENTITY x \"1\"> ]>\n"
        "<robot name='r'>\n"
        "  <!-- <link name=\"fake\"> in a comment -->\n"
        "  <link name=\"a\"><inertial><mass value=\"2\"/></inertial></link><link name=\"b\"/>\n"
        "  <![CDATA[ <link name=\"cdata\"/> ]]>\n"
        "  <joint name=\"j\"\n"
        "         type='revolute'>\n"
        "    <origin xyz=\"0  0.25\t-2e-1\"/>\n"
        "    <axis xyz=\"0 0 1\"/>\n"
        "  </joint>\n"
        "</robot>\n";
    ck_assert_str_eq(out, want);
    ck_assert_int_eq((int)olen, (int)strlen(want));
    free(out);
    /* overlapping edits are refused */
    ck_assert_int_eq(xml_edits_set_attr(e, doc_text, len, find(root, "mass", NULL), "value", "3"), 0);
    ck_assert_int_eq(xml_edits_apply(e, doc_text, len, &out, &olen), -1);
    xml_edits_free(e);
    xmlFreeDoc(d);
}
END_TEST

START_TEST(test_numbers)
{
    xmlDoc *d = parse();
    xmlNode *root = xmlDocGetRootElement(d);
    sid_error err = { 0 };
    double x[3];
    ck_assert_int_eq(xml_attr_numbers("t.urdf", find(root, "origin", NULL), "xyz", 3, 3, x, &err), 3);
    ck_assert(x[0] == 0 && x[1] == 0.1 && x[2] == -0.2);
    ck_assert_int_eq(xml_attr_numbers("t.urdf", find(root, "axis", NULL), "xyz", 3, 3, x, &err), 0);
    ck_assert_int_eq(xml_attr_numbers("t.urdf", find(root, "origin", NULL), "xyz", 1, 2, x, &err), -1);
    /* libxml2 gives the value normalised (a tab read as a space) */
    ck_assert_str_eq(err.msg, "t.urdf:9: <origin> xyz=\"0  0.1 -2e-1\": expected 1 to 2 numbers");
    ck_assert_int_eq(xml_attr_numbers("t.urdf", find(root, "joint", NULL), "type", 1, 1, x, &err), -1);
    /* libxml2 dates an element by the line its start tag ends on */
    ck_assert_str_eq(err.msg, "t.urdf:8: <joint name=\"j\"> type=\"revolute\": expected 1 number");
    xmlFreeDoc(d);
}
END_TEST

START_TEST(test_parse_errors_name_the_line)
{
    sid_error err = { 0 };
    const char *bad = "<robot>\n  <link name=\"a\">\n</robot>\n";
    ck_assert_ptr_null(xml_text_parse("bad.urdf", bad, strlen(bad), &err));
    ck_assert_msg(!strncmp(err.msg, "bad.urdf:3: Opening and ending tag mismatch: link line 2 and robot", 67), "%s",
                  err.msg);
    ck_assert_int_eq(err.status, SID_ERR_INPUT);
    ck_assert_ptr_null(xml_text_parse("empty.urdf", "", 0, &err));
    ck_assert_msg(!strncmp(err.msg, "empty.urdf", 10), "%s", err.msg);
}
END_TEST

Suite *xml_text_suite(void)
{
    Suite *s = suite_create("xml_text");
    TCase *tc = tcase_create("xml_text");
    tcase_add_test(tc, test_spans);
    tcase_add_test(tc, test_edits_change_only_their_bytes);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_parse_errors_name_the_line);
    suite_add_tcase(s, tc);
    return s;
}
