/* Setups and checks shared by the unit tests: see fixtures.h. */
#include "fixtures.h"
#include "testutil.h"

void
fixture_one_gpu_plan(struct plan *p)
{
	plan_init(p);
	p->tp = p->pp = p->dp = 1;
	p->micro_batch = 1;
	p->global_batch = 1;
	p->seq_len = 1024;
	p->flash_attention = true;
}

void
fixture_gpt3_dp64(struct cluster *c, struct model *m, struct plan *p, int zero)
{
	test_load_cluster(c, TEST_CLUSTER_YAML);
	test_load_model(m, GPT3_YAML);
	plan_init(p);
	p->tp = p->pp = 1;
	p->dp = 64;
	p->global_batch = 64;
	p->seq_len = 2048;
	p->zero = zero;
}

void
fixture_cluster_refused(size_t i, const char *yaml, const char *message, int line, int column)
{
	struct plan_error err;
	struct cluster c;

	plan_error_clear(&err);
	ck_assert(!cluster_load_string(&c, "c.yaml", yaml, &err));
	ck_assert_msg(strstr(err.message, message), "case %zu: got '%s'", i, err.message);
	ck_assert_msg(err.line == line && err.column == column, "case %zu: at %d:%d, expected %d:%d", i, err.line,
		      err.column, line, column);
	cluster_release(&c);
}
