/*
 * One profile or study loader on any bytes: the FUZZ_LOAD_* macro that
 * tests/fuzz/meson.build defines picks which. A loader must return true
 * or false with a message, never crash, leak or read out of bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "io/hf_config.h"
#include "io/multimodal_load.h"
#include "io/profile_load.h"
#include "io/study.h"
#include "fuzz.h"

#if defined(FUZZ_LOAD_MODEL)
static struct model obj;
#define LOAD(text, err) model_load_string(&obj, "fuzz.yaml", (text), (err))
#elif defined(FUZZ_LOAD_HF)
/* A Hugging Face config.json, converted and then loaded as the model it names. */
static struct model obj;
static bool
hf_load(const char *text, struct plan_error *err)
{
	char *yaml;
	bool ok;

	if (!hf_config_text_to_yaml("fuzz.json", text, strlen(text), "fuzz", &yaml, err))
		return false;
	ok = model_load_string(&obj, "fuzz.json", yaml, err);
	free(yaml);
	return ok;
}
#define LOAD(text, err) hf_load((text), (err))
#elif defined(FUZZ_LOAD_CLUSTER)
static struct cluster obj;
#define LOAD(text, err) cluster_load_string(&obj, "fuzz.yaml", (text), (err))
#define RELEASE() cluster_release(&obj)
#elif defined(FUZZ_LOAD_GPU)
static struct gpu obj;
#define LOAD(text, err) gpu_load_string(&obj, "fuzz.yaml", (text), (err))
#elif defined(FUZZ_LOAD_FRAMEWORK)
static struct framework obj;
#define LOAD(text, err) framework_load_string(&obj, "fuzz.yaml", (text), (err))
#elif defined(FUZZ_LOAD_COMPRESSOR)
static struct compressor obj;
#define LOAD(text, err) compressor_load_string(&obj, "fuzz.yaml", (text), (err))
#elif defined(FUZZ_LOAD_STUDY)
static struct study obj;
#define LOAD(text, err) study_load_string(&obj, "fuzz.yaml", (text), (err))
/* A study that loads is also checked and its cells counted, as sweep does. */
#define LOADED(err) do { long cells; study_check(&obj, &cells, (err)); } while (0)
#define RELEASE() study_release(&obj)
#elif defined(FUZZ_LOAD_MULTIMODAL)
/* A kind: multimodal model (DistMM): its submodules load from the bundled profiles. */
static struct multimodal obj;
#define LOAD(text, err) multimodal_load_string(&obj, "fuzz.yaml", (text), (err))
#else
#error "define one of FUZZ_LOAD_MODEL, _HF, _CLUSTER, _GPU, _FRAMEWORK, _COMPRESSOR, _STUDY, _MULTIMODAL"
#endif

#ifndef RELEASE
#define RELEASE() ((void)0)
#endif
#ifndef LOADED
#define LOADED(err) ((void)0)
#endif

void
fuzz_target_init(void)
{
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	struct plan_error err;

	/* Zeroed, so that releasing after a failed load frees nothing stale. */
	memset(&obj, 0, sizeof(obj));
	plan_error_clear(&err);
	if (LOAD(text, &err))
		LOADED(&err);
	RELEASE();
	free(text);
	return 0;
}
