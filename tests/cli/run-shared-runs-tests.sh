#!/usr/bin/env bash
# The 132 published runs of shared/validation (tests/data/shared-runs.csv,
# a copy of published-runs.csv with its README as shared-runs.md), so that a
# clean clone checks them: scripts/import-runs reads every row, and
# plan-cli validate predicts them within per-source MAPE bounds; runs that
# ran are predicted to fit, but for the rows listed below.
# Bounds: the figures measured when the table came under test (helper
# branch 'import', December 2026; after the importer read NeMo's
# "recompute: not stated" as none and its launcher configs' TP overlap,
# FlagPerf's case scripts' distributed optimizer, InternEvo's overlapped
# gradient sync and the MoE shapes) plus
# 2 points of room (FlagPerf and all 132: after selective_recompute
# core_attn, Megatron-Core rerunning the fused attention forward, issue
# 25; then FlagPerf 11.20 and all 7.53 after the fp32 main_grad
# accumulation, framework key main_grad; NeMo and FlagPerf after the fp8 forward's fast accumulation,
# fp8_fast_accum_speedup, and TE's norm writing fp8 itself). A change that moves a source past its bound updates the bound and
# this comment with the new figure, never silently. NCCL's plateau factor
# on multi-node ring all-reduce latency (inter_node.ring_plateau) moved
# InternEvo 7.20 -> 6.40 %; all-to-all at its own efficiency on DGX B200
# (0.60, SimuMax's NCCL measurement) SimuMax 7.78 -> 7.49 %; the experts'
# main_grad by the framework's key (fused on Ampere: 4 bytes added, not a
# roofline) FlagPerf 11.24 -> 11.17 %, all 132 7.44 -> 7.43 %. Composer's
# training metrics over the logits each micro-batch (llm-foundry's
# metric_logit_bytes) MosaicML 7.24 -> 4.14 %, all 132 7.43 -> 6.68 %;
# fused attention by head dim, kernel padding and causal diagonal tiles
# (attn_shape.c) MosaicML 4.14 -> 4.28, SimuMax 7.49 -> 7.34, InternEvo
# 6.40 -> 6.15, NeMo 7.57 -> 7.58 %, all 132 6.68 -> 6.65 %; DeepSpeed
# ZeRO-3 step bytes and syncs (zero3_step_bytes) FlagPerf 11.17 -> 10.99 %,
# all 132 6.65 -> 6.62 %. Megatron-Core core_v0.5-v0.6's MoE layer
# (megatron-core-0.6 profiles: allgather dispatcher, GroupedMLP's unfused
# main_grad, SequentialMLP and its autograd copies for Qwen) FlagPerf
# 10.96 -> 10.19 %, all 132 6.61 -> 6.49 % (after DeepSpeed's pre-divide;
# bounds kept).
# Transformer Engine's p2p ring passes around the attention kernels
# (context_par.c, helper nemosmall) and nemo-24.07's compiled fused loss
# (22 + 10 bytes a logit) NeMo 7.58 -> 6.65 %, all 132 6.62 -> 6.53 %
# (before the MoE change; both together 6.62 -> 6.41 %).
# Megatron-Core's embedding gradient, passes before the DP reduction, step
# copy and second gather with experts (main_grad, grad_check_bytes,
# grad_scale_bytes, step_bytes, moe_param_gathers; helper simumoe) SimuMax
# 7.34 -> 5.14 %; sequence parallelism's backward re-gather of each
# column-parallel input (tensor_par.c; helper simudense) SimuMax 7.34 ->
# 5.92 %; together with the above: SimuMax 3.90, NeMo 6.65, FlagPerf
# 8.50 %, all 132 6.62 -> 5.51 %. The allgather dispatcher's MLP pair
# no longer counted twice on the TP line (helper review6): Mixtral -15.5
# -> -22.5 %, FlagPerf 8.56 -> 8.90 %, all 132 5.52 -> 5.57 % (on 7e00380).
# The allgather dispatcher's MoE layers no longer pay the MLP's own
# sequence-parallel pair besides the dispatcher's (helper review6):
# FlagPerf 8.56 -> 8.90 % (Mixtral 8x7B -15.5 -> -22.5 %), all 132 5.52 ->
# 5.57 %; bounds tightened to the measured figures + 2 points.
# ZeRO-3's step gathers the persistent tensors again, in a Python loop over
# the ranks (deepspeed-2021 persist_gather_copy, helper zero3, seventh
# session), and holds one weight at a time (zero3_grad_copies): Table 2
# 6.28 -> 5.34 %, all 132 5.57 -> 5.49 %, NAR21-T2-4 fits (76.3 GiB);
# bounds of the sources that moved tightened to the figures + 2 points.
# Megatron-Core's overlapped interleaved exchange (framework key
# pp_p2p_overlap: overlap_p2p_comm, which NeMo's launcher recipes set; helper
# reviewpipe, twenty-fourth session) NeMo 6.16 -> 7.74 % (bias -4.7 ->
# -7.6 %, Spearman 0.958 -> 0.993; its seven vpp rows 0.2-0.5 s faster),
# all 132 5.51 -> 5.65 %; the others unchanged (SC21's interleaved rows
# block, megatron-lm-2021); bounds kept.
#   source (rows)                       MAPE measured  bound
#   Narayanan et al. Table 1 (10)         3.42 %       5.7 %
#   Narayanan et al. Table 2 (12)         5.34 %       7.3 %
#   MosaicML llm-foundry (32)             4.28 %       6.3 %
#   SimuMax B200 (24: 12 dense, 12 MoE)   3.90 %       5.9 %
#   NVIDIA NeMo 24.07 (12)                6.61 %       8.6 %
#   InternEvo (21; internevo profile)     6.16 %       8.2 %
#   FlagPerf (21)                         8.90 %      10.9 %
#   all 132                               5.49 %       7.5 %
#   memory, 24 rows with a measured peak 0.88 %         2.0 %
# Predicted not to fit although they ran: none of 132 (the target of issue
# 24 is at most 2 %; NAR21-T2-4 was, at 82.6 GiB, until DeepSpeed 2021's
# one-weight-at-a-time gathering was modelled: 76.3 GiB): the check is
# that none is. FLAGPERF-QWEN15MOE-A800-8 (86.2 GiB with the table's 60
# experts of 1408, top-4) fits since its row takes the model FlagPerf's
# case script runs (megatron_pai_main.sh: 8 experts of FFN 5504, top-2,
# 54.4 GiB of the page's 66). The NeMo 24.07 rows take frameworks/nemo-24.07.yaml (Apex
# distributed_fused_adam: bf16 gradient buffer, 10 optimizer bytes a
# parameter) and NeMo's Llama and Nemotron models no dropout masks
# (dropout: false); before, GPT20B (94.1), GPT175B-512 (81.2),
# NEM4-340B (96.3) and L3-8B (86.9) did not fit either.
# Usage: run-shared-runs-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs and conditions are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
table=$root/tests/data/shared-runs.csv

"$root/scripts/import-runs" "$table" --out "$tmp/imp" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "import-runs reads all 132 shared runs (exit 0, none skipped)" \
	'[ $rc -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q "^import-runs: 132 runs," "$tmp/out" &&
	 [ "$(tail -n +2 "$tmp/imp/runs.csv" | wc -l)" -eq 132 ] && [ "$(wc -l <"$tmp/imp/inferred.txt")" -eq 132 ]'
"$bin" validate "$tmp/imp/runs.csv" --format json >"$tmp/v.json" 2>"$tmp/verr"
vrc=$?
"$bin" validate "$tmp/imp/runs.csv" >"$tmp/v.txt" 2>&1
check "validate predicts all 132" '[ $vrc -eq 0 ] && jq -e ".rows | length == 132" "$tmp/v.json" >/dev/null'
# bound SOURCE_PREFIX ROWS MAPE_PCT
bound() {
	local src=$1 rows=$2 most=$3
	check "$src: $rows rows, MAPE at most $most %" \
		'jq -e --arg s "$src" --argjson r "$rows" --argjson b "$most" "[.sources[] | select(.source | startswith(\$s))] |
			length == 1 and .[0].rows == \$r and .[0].mape * 100 <= \$b" "$tmp/v.json" >/dev/null ||
		 { jq -c --arg s "$src" ".sources[] | select(.source | startswith(\$s))" "$tmp/v.json"; false; }'
}
bound "Narayanan et al. 2021 (SC21) Megatron-LM, Table 1" 10 5.7
bound "Narayanan et al. 2021 (SC21) Megatron-LM, Table 2" 12 7.3
bound "MosaicML" 32 6.3
bound "MooreThreads SimuMax" 24 5.9
bound "NVIDIA NeMo" 12 8.6
bound "InternLM/InternEvo" 21 8.2
bound "FlagOpen/FlagPerf" 21 10.9
check "all 132: MAPE at most 7.5 %" 'jq -e ".mape * 100 <= 7.5" "$tmp/v.json" >/dev/null || { jq .mape "$tmp/v.json"; false; }'
check "memory: 24 rows with a measured peak, MAPE at most 2 %" \
	'grep -q "^memory: rows 24, MAPE" "$tmp/v.txt" &&
	 awk "/^memory: rows/ { m = \$5 + 0 } END { exit !(m <= 2.0) }" "$tmp/v.txt" || { grep "^memory" "$tmp/v.txt"; false; }'
jq -r '.rows[] | select(.fits == false) | .id' "$tmp/v.json" >"$tmp/nofit"
check "runs that ran and are predicted not to fit: none ($(wc -l <"$tmp/nofit") now)" \
	'[ ! -s "$tmp/nofit" ] || { echo "predicted not to fit: $(cat "$tmp/nofit")"; false; }'
finish
