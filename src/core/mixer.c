#include <math.h>

#include "plan/mixer.h"

#include "plan/gdn.h"
#include "plan/mamba.h"

double
mixer_scan_time(const struct cluster *c, double flops, double bytes, int kernels, bool backward)
{
	double peak = c->gpu.peak_flops * gpu_clock_factor(&c->gpu);

	return fmax(flops / (peak * mamba_ssd_efficiency(c, backward)), compute_memory_time(c, bytes)) +
	       kernels * c->gpu.launch_overhead_s;
}

void
mixer_total_time(const struct cluster *c, double launch_s, int scan_fwd_kernels, int scan_bwd_kernels,
		 struct mixer_cost *out)
{
	out->mem_fwd_s = compute_memory_time(c, out->mem_fwd_bytes) + (out->fwd_kernels - scan_fwd_kernels) * launch_s;
	out->mem_bwd_s = compute_memory_time(c, out->mem_bwd_bytes) + (out->bwd_kernels - scan_bwd_kernels) * launch_s;
	out->fwd_s = out->gemm_fwd_s + out->scan_fwd_s + out->mem_fwd_s;
	out->bwd_s = 2.0 * out->gemm_fwd_s + out->scan_bwd_s + out->mem_bwd_s;
}

bool
mixer_present(const struct model *m)
{
	return model_has_part(m, MODEL_PART_MAMBA) || model_has_part(m, MODEL_PART_GDN);
}

void
mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
	   struct compute_casts *casts, struct mixer_cost *out)
{
	*out = (struct mixer_cost){ 0 };
	if (model_has_part(m, MODEL_PART_MAMBA))
		mamba_mixer_cost(m, p, c, casts, out);
	else if (model_has_part(m, MODEL_PART_GDN))
		gdn_mixer_cost(m, p, c, casts, out);
}

void
mixer_kernels(const struct model *m, const struct plan *p, int *fwd, int *bwd)
{
	*fwd = *bwd = 0;
	if (model_has_part(m, MODEL_PART_MAMBA))
		mamba_mixer_kernels(p, fwd, bwd);
	else if (model_has_part(m, MODEL_PART_GDN))
		gdn_mixer_kernels(m, p, fwd, bwd);
}

double
mixer_activation_bytes(const struct model *m, const struct plan *p)
{
	if (model_has_part(m, MODEL_PART_MAMBA))
		return mamba_mixer_activation_bytes(m, p);
	if (model_has_part(m, MODEL_PART_GDN))
		return gdn_mixer_activation_bytes(m, p);
	return 0.0;
}

double
mixer_in_proj_dim(const struct model *m)
{
	if (model_has_part(m, MODEL_PART_MAMBA))
		return model_mamba_in_proj_dim(m);
	if (model_has_part(m, MODEL_PART_GDN))
		return model_gdn_in_proj_dim(m);
	return 0.0;
}

double
mixer_out_proj_in_dim(const struct model *m)
{
	if (model_has_part(m, MODEL_PART_MAMBA))
		return model_mamba_inner(m);
	if (model_has_part(m, MODEL_PART_GDN))
		return model_gdn_v_dim(m);
	return 0.0;
}

double
mixer_model_flops(const struct model *m, double tokens)
{
	if (model_has_part(m, MODEL_PART_MAMBA))
		return mamba_layer_model_flops(m, tokens);
	if (model_has_part(m, MODEL_PART_GDN))
		return gdn_layer_model_flops(m, tokens);
	return 0.0;
}

bool
mixer_plan_check(const struct model *m, const struct plan *p, struct plan_error *err)
{
	return mamba_plan_check(m, p, err) && gdn_plan_check(m, p, err);
}
