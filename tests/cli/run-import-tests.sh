#!/usr/bin/env bash
# scripts/import-runs: a table of published runs (the columns of
# ../shared/validation/published-runs.csv, copied as
# tests/data/published-runs-table.csv) turned into validate's CSV with
# generated model and cluster profiles. On the 66 shared runs it must give
# what the hand-made tests/data/published-runs.csv gives, row by row; bad
# rows stop it with the row and the column; validate points a table at it.
# Usage: run-import-tests.sh PLAN_CLI SOURCE_ROOT
# jq programs are in single quotes on purpose:
# shellcheck disable=SC2016
set -u
. "$(dirname "$(realpath "$0")")/harness.sh"
harness_setup "$1" "$2"
imp=$root/scripts/import-runs
table=$root/tests/data/published-runs-table.csv

"$imp" "$table" --out "$tmp/imp" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "import-runs on the 66 shared runs: exit 0, 66 runs, 3 clusters" \
	'[ $rc -eq 0 ] && grep -q "^import-runs: 66 runs, 21 models, 3 clusters" "$tmp/out" &&
	 [ "$(tail -n +2 "$tmp/imp/runs.csv" | wc -l)" -eq 66 ] && [ "$(wc -l <"$tmp/imp/inferred.txt")" -eq 66 ]'
"$bin" validate "$tmp/imp/runs.csv" --format json >"$tmp/imp.json" 2>"$tmp/err"
"$bin" validate "$root/tests/data/published-runs.csv" --format json >"$tmp/hand.json"
check "every row predicts as in the hand-made CSV (times within 1e-9, measurements within its rounding)" \
	'jq -e --slurpfile h "$tmp/hand.json" "[.rows, \$h[0].rows] | transpose |
		all(.[0].id == .[1].id and ((.[0].predicted_iteration_time_s - .[1].predicted_iteration_time_s) | fabs) <
		    1e-9 * .[1].predicted_iteration_time_s and ((.[0].measured_iteration_time_s - .[1].measured_iteration_time_s) | fabs) <
		    1e-5 * .[1].measured_iteration_time_s)" "$tmp/imp.json" >/dev/null'
check "the measured memory of the B200 rows is read too (other_measured's peak_alloc_GiB)" \
	'jq -e --slurpfile h "$tmp/hand.json" "[.rows, \$h[0].rows] | transpose | map(select(.[1].measured_memory_bytes)) |
		length == 12 and all(((.[0].measured_memory_bytes - .[1].measured_memory_bytes) | fabs) < 1e-6 * .[1].measured_memory_bytes)" "$tmp/imp.json" >/dev/null'
check "the generated profiles say where they come from" \
	'grep -q "^# from B200-SXM (single 8-GPU node)" "$tmp"/imp/clusters/b200*.yaml &&
	 grep -q "^SMX-B200-llama3-70b-l12-tp8-pp1-dp1-mbc4: .*model: Llama-style" "$tmp/imp/inferred.txt" &&
	 grep -q "^NAR21-T2-3: .*framework deepspeed-2021 (source of 2021)" "$tmp/imp/inferred.txt"'

# validate given the table itself says what to do.
"$bin" validate "$table" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate on a published-runs table: exit 3, pointing at import-runs" \
	'[ $rc -eq 3 ] && [ ! -s "$tmp/out" ] && grep -q "a table of published runs .*scripts/import-runs" "$tmp/err"'

# Bad rows: the file, the row and the column, exit 1; the rows it can
# read are still written (here the second row), --strict stops instead.
bad_row() {
	local name=$1 text=$2 sedexpr=$3
	{ head -1 "$table"; sed -n 2p "$table" | sed "$sedexpr"; sed -n 3p "$table"; } >"$tmp/bad.csv"
	rm -rf "$tmp/bad"
	"$imp" "$tmp/bad.csv" --out "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$name" '[ $rc -eq 1 ] && grep -qF "skipped $tmp/bad.csv:2: row '"'"'NAR21-T1-1'"'"': $text" "$tmp/err" &&
		[ "$(tail -n +2 "$tmp/bad/runs.csv" | cut -d, -f1)" = NAR21-T1-2 ] && grep -q "1 rows skipped" "$tmp/out"'
}
bad_row "an unknown GPU" "column 'gpu': 'TPU-v4' is none of" 's/,A100-SXM4,/,TPU-v4,/'
bad_row "a network with no bandwidth" "column 'inter_node': no bandwidth in" 's/8x HDR InfiniBand 200 Gb\/s per node (compute)/InfiniBand/'
bad_row "a layer count that is not a number" "column 'layers': 'many' is not a number" 's/,24,2304,/,many,2304,/'
bad_row "a micro-batch that is not whole" "column 'micro_batch': '16.5' is not a whole number from 1" 's/,512,16,,137,/,512,16.5,,137,/'
# plan-cli's ranges and checks, before a runs.csv validate would refuse (issue 28).
bad_row "a sequence length past plan-cli's range" "column 'seq_len': '1e300' is not a whole number from 1 to 100000000" \
	's/,51200,2048,/,51200,1e300,/'
bad_row "GPUs that are not the plan's" "32 GPUs, but tp x cp x pp x dp is 1 x 1 x 1 x 16 = 16" \
	's/,1,1,1,32,1,1,none/,1,1,1,16,1,1,none/'
bad_row "nothing measured" "no iter_time_s, tokens_per_s_per_gpu, tflops_per_gpu, mfu_pct or hfu_pct" 's/,137,,,,/,,,,,/'
# Rows of other kinds, made from the first row of the table: an H100
# torchtitan run that reports only MFU, an MoE run with EP on EFA nodes,
# HSDP (MiCS inside each node).
python3 - "$table" "$tmp/kinds.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
base = rows[0]
def row(**kw):
    r = dict(base)
    r.update(kw)
    return r
out = [
    row(id="TT-H100", source="torchtitan benchmark 2025", source_ref="", model="Llama 3 8B", layers="32",
        hidden="4096", ffn_hidden="14336", heads="32", kv_heads="8", vocab="128256", seq_len="8192",
        gpus="64", gpu="H100 SXM5", gpu_mem_GB="80", intra_node="NVLink4/NVSwitch",
        inter_node="8 x 400 Gbps InfiniBand NDR", precision="bf16", tp="1", pp="1", vp="", dp="64",
        sharding="FSDP2 (fully_shard)", recompute="selective (op)", global_batch_seqs="64",
        micro_batch="1", tflops_per_gpu="", mfu_pct="38.5"),
    row(id="MOE-P4D", source="a 2023 MoE study", source_ref="", model="Mixtral 8x7B", layers="32",
        hidden="4096", ffn_hidden="14336", heads="32", kv_heads="8", vocab="32000", seq_len="4096",
        experts="8", topk="2", gpus="64", gpu="A100", gpu_mem_GB="40", intra_node="NVLink3",
        inter_node="400 Gbps EFA per node", precision="bf16", tp="2", pp="1", vp="", dp="32", ep="8",
        sharding="Megatron distributed optimizer", recompute="selective", global_batch_seqs="256",
        micro_batch="1", tflops_per_gpu="", iter_time_s="9.5"),
    row(id="HSDP", source="a 2024 FSDP study", source_ref="", model="Llama 2 7B", layers="32",
        hidden="4096", ffn_hidden="11008", heads="32", kv_heads="", vocab="32000", seq_len="4096",
        gpus="32", gpu="A100-SXM4", gpu_mem_GB="80", sharding="FSDP HYBRID_SHARD (HSDP)",
        recompute="none", global_batch_seqs="256", micro_batch="2", tflops_per_gpu="", tp="1", pp="1",
        vp="", dp="32", iter_time_s="4.0", notes="an HGX A100 with Intel Xeon hosts"),
    row(id="DGX2-V100", source="Shoeybi et al. 2019, Megatron-LM", source_ref="", model="GPT 8.3B",
        layers="72", hidden="3072", ffn_hidden="12288", heads="32", kv_heads="", vocab="51200",
        seq_len="1024", gpus="512", gpu="V100-SXM3", gpu_mem_GB="32", intra_node="NVSwitch (DGX-2H)",
        inter_node="8x 100 Gb/s EDR InfiniBand per node", precision="fp16", tp="8", pp="1", vp="",
        dp="64", sharding="none", recompute="yes", global_batch_seqs="512", micro_batch="8",
        tflops_per_gpu="39"),
]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(base.keys()))
w.writeheader()
w.writerows(out)
PY
"$imp" "$tmp/kinds.csv" --out "$tmp/kinds" >"$tmp/out" 2>"$tmp/err"
rc=$?
"$bin" validate "$tmp/kinds/runs.csv" --format json >"$tmp/kinds.json" 2>"$tmp/err2"
vrc=$?
peak=$(sed -n 's/^peak_flops: \([0-9.]*\) TFLOPS$/\1/p' "$root/gpus/h100-sxm5-80gb.yaml")
check "other kinds of runs import and validate" '[ $rc -eq 0 ] && [ $vrc -eq 0 ] && jq -e ".rows | length == 4" "$tmp/kinds.json" >/dev/null'
check "a DGX-2 of V100s: 16 GPUs a node, NVLink2 150 GB/s, 2019 Megatron (fp16, no flash attention, Eq. 3)" \
	'grep -q "^gpus_per_node: 16$" "$tmp"/kinds/clusters/v100*.yaml && grep -q "bandwidth: 150 GB/s" "$tmp"/kinds/clusters/v100*.yaml &&
	 grep "^DGX2-V100," "$tmp/kinds/runs.csv" | grep -q ",false,megatron-lm-2021,fp16,,,39.0,megatron-eq3,"'
check "torchtitan on H100: pytorch-fsdp2, ZeRO-3, MFU as model TFLOP/s of the H100 peak" \
	'grep "^TT-H100," "$tmp/kinds/runs.csv" | grep -q ",3,,,,pytorch-fsdp2,bf16,,,$(awk -v p="$peak" "BEGIN { print 0.385 * p }"),model," &&
	 grep -q "^TT-H100: .*h100-sxm5-80gb\|^TT-H100: .*intra-node 450 GB/s" "$tmp/kinds/inferred.txt"'
check "MoE on p4d: experts and top-k, EP 8, 400 Gbit/s of EFA a node as 8 NICs of 50 Gbit/s at 15 us, ZeRO-1" \
	'grep -q "^MOE-P4D: .*MoE, 8 experts, top-2" "$tmp/kinds/inferred.txt" &&
	 grep -q "nic_bandwidth: 50 Gbit/s" "$tmp"/kinds/clusters/a100-sxm4-40gb*.yaml && grep -q "latency: 15 us" "$tmp"/kinds/clusters/a100-sxm4-40gb*.yaml &&
	 grep "^MOE-P4D," "$tmp/kinds/runs.csv" | grep -q ",1,,,,megatron-lm,"'
check "HSDP: ZeRO-3 in groups of one node (mics_group 8)" 'grep "^HSDP," "$tmp/kinds/runs.csv" | grep -q ",3,8,,"'
# NCCL's cost of a network post by the hosts' CPU: the DGX A100 layout
# (A100 SXM4, 8 x 200 Gb/s InfiniBand) is AMD, 2 us, unless the row says
# Intel; others 1 us.
check "the hosts' network post: 2 us for the DGX A100 layout, 1 us where the row says Intel, and on H100" \
	'grep -q "^  net_overhead: 2 us$" "$tmp"/imp/clusters/a100-sxm4-80gb*.yaml &&
	 grep -q "^NAR21-T2-6: .*AMD EPYC 7742 assumed" "$tmp/imp/inferred.txt" &&
	 grep -q "^HSDP: .*hosts: Intel (the row says so)" "$tmp/kinds/inferred.txt" &&
	 grep -q "^  net_overhead: 1 us$" "$tmp"/kinds/clusters/h100*.yaml &&
	 [ "$(grep -l "^  net_overhead: 1 us$" "$tmp"/kinds/clusters/a100-sxm4-80gb*.yaml | wc -l)" -eq 1 ]'
# The words of published tables as a careful engineer reads them (issue
# 26 item 5), one hand-made row per rule, from the first row of the table.
python3 - "$table" "$tmp/rules.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
base = dict(rows[0], source="a 2025 study", source_ref="", tflops_per_gpu="", iter_time_s="1.0", vp="",
            recompute="none", sharding="none", notes="", inferred_fields="", other_measured="")
def row(**kw):
    r = dict(base)
    r.update(kw)
    return r
b200 = dict(gpus="8", gpu="B200-SXM", gpu_mem_GB="180", intra_node="NVLink5 (1.8 TB/s bidir)",
            inter_node="none (single node)", tp="1", pp="1", dp="8", cp="1", global_batch_seqs="8",
            micro_batch="1", precision="bf16", seq_len="4096")
h100 = dict(gpus="64", gpu="H100-SXM", gpu_mem_GB="80", tp="1", pp="1", dp="64", cp="1", ep="1",
            global_batch_seqs="64", micro_batch="1", precision="bf16", seq_len="4096", vocab="32000",
            intra_node="NVLink4/NVSwitch 900 GB/s bidir per GPU", inter_node="8x400 Gb/s InfiniBand per node")
llama = dict(model="Llama 2 7B", layers="32", hidden="4096", ffn_hidden="11008", heads="32", kv_heads="32",
             experts="", topk="")
out = [
    row(id="DSV3", model="DeepSeek-V3 (truncated, MLA, dense_layers=1)", layers="4", hidden="7168",
        ffn_hidden="18432 dense / 2048 per expert / 2048 shared", heads="128", kv_heads="128", vocab="129280",
        experts="256", topk="8", ep="8", **b200),
    row(id="DSV2", model="DeepSeek-V2", layers="6", hidden="5120",
        ffn_hidden="12288 dense / 1536 per expert / 3072 shared", heads="128", kv_heads="128", vocab="102400",
        experts="160", topk="6", ep="8", **b200),
    row(id="NVFP4", model="Llama 2 7B", layers="32", hidden="4096", ffn_hidden="11008", heads="32",
        kv_heads="32", experts="", topk="", **dict(b200, gpu="B300 SXM", gpu_mem_GB="288", precision="bf16_with_nvfp4_mixed")),
    row(id="MIXTRAL", model="Mixtral 8x7B (MoE)", layers="32", hidden="4096", ffn_hidden="14336 per expert",
        heads="32", kv_heads="8", vocab="32000", experts="8", topk="2", ep="8", **b200),
    row(id="GROK", model="Grok-1", layers="64", hidden="6144", ffn_hidden="32768 per expert", heads="48",
        kv_heads="8", vocab="131072", experts="8", topk="2", ep="8", **b200),
    row(id="QWENMOE", model="Qwen1.5-MoE-A2.7B", layers="24", hidden="2048",
        ffn_hidden="1408 per expert / 5632 shared", heads="16", kv_heads="16", vocab="151936",
        experts="60 routed + 1 shared (4 shared-expert widths)", topk="4", ep="4", **b200),
    row(id="NEMO-L2", source="NVIDIA NeMo Framework performance summary", recompute="not stated",
        sharding="distributed optimizer (NeMo default; inferred)", **llama,
        **dict(h100, precision="FP8 (TE delayed scaling)")),
    row(id="NEM4", source="NVIDIA NeMo Framework performance summary (NeMo 24.07 container)", model="Nemotron-4 340B", layers="96",
        hidden="18432", ffn_hidden="73728", heads="96", kv_heads="8", experts="", topk="",
        seq_par="yes (NeMo default with TP>1)", **dict(h100, vocab="256000", tp="8", pp="8", dp="1")),
    row(id="GPT5B", source="NVIDIA NeMo Framework performance summary", model="GPT-3 5B (NeMo GPTConfig5B)",
        layers="24", hidden="4096", ffn_hidden="16384", heads="32", kv_heads="32", experts="", topk="",
        **dict(h100, vocab="50257", seq_len="2048")),
    row(id="DDP", source="a 2025 Megatron study", notes="megatron-core",
        sharding="not stated (Megatron default DDP; distributed optimizer not stated)",
        recompute="not stated", seq_par="not stated",
        **llama, **dict(h100, inter_node="400 Gb/s InfiniBand per GPU", tp="2", dp="32")),
    row(id="FLAGPERF", source="FlagOpen/FlagPerf (BAAI) LLM training benchmarks", notes="megatron-core core_v0.6.0",
        sharding="not stated (Megatron default DDP; distributed optimizer not stated)", seq_par="not stated",
        **llama, **dict(h100, inter_node="InfiniBand 400 Gb/s (stated; NICs per node not stated)", tp="2",
                        dp="32", intra_node="900 GB/s GPU-to-GPU (450 GB/s each direction)")),
    row(id="INTERNEVO", source="InternLM/InternEvo", model="InternLM 7B",
        sharding="ZeRO-1 within groups of 8 DP ranks (zero1=8; hierarchical, MiCS-like partition group)",
        notes="flash-attention, overlapped grad/param sync",
        **{k: v for k, v in llama.items() if k != "model"},
        **dict(h100, gpu="A100-SXM4-80GB", inter_node="4x100 Gb/s RoCE per node",
               intra_node="NVLink3/NVSwitch 600 GB/s bidir per GPU")),
    row(id="MFSDP", source="NVIDIA Megatron-Bridge performance", sharding="Megatron-FSDP (optim_grads_params)",
        **llama, **h100),
    row(id="PAIMOE", source="FlagOpen/FlagPerf (BAAI) LLM training benchmarks", model="Mixtral 8x7B (MoE)",
        layers="4", hidden="4096", ffn_hidden="14336 per expert", heads="32", kv_heads="8", vocab="32000",
        experts="8", topk="2", notes="Pai-Megatron-Patch on Megatron-LM 240405, no --moe-grouped-gemm (SequentialMLP)",
        **dict(b200, ep="1")),
]
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(base.keys()))
w.writeheader()
w.writerows(out)
PY
"$imp" "$tmp/rules.csv" --out "$tmp/rules" >"$tmp/out" 2>"$tmp/err"
rc=$?
"$bin" validate "$tmp/rules/runs.csv" --format json >"$tmp/rules.json" 2>"$tmp/err2"
vrc=$?
check "the rules' rows import and validate" '[ $rc -eq 0 ] && [ $vrc -eq 0 ] && jq -e ".rows | length == 14" "$tmp/rules.json" >/dev/null'
# The model profile of row $1 (its first line names the row).
model_of() { grep -l "^# from $1:" "$tmp"/rules/models/*.yaml; }
field() { awk -F, -v id="$1" -v col="$2" '{ sub(/\r$/, "") } NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } $1 == id { print $c[col] }' \
	"$tmp/rules/runs.csv"; }
check "MoE '18432 dense / 2048 per expert / 2048 shared': dense FFN 18432, experts of 2048, 1 shared, the row's 1 dense layer, MLA" \
	'f=$(model_of DSV3) && grep -q "^ffn_hidden: 18432$" "$f" && grep -q "^  expert_ffn_hidden: 2048$" "$f" &&
	 grep -q "^  shared_experts: 1$" "$f" && grep -q "^  first_dense_layers: 1$" "$f" && grep -q "^attention: mla$" "$f" &&
	 grep -q "^  kv_lora_rank: 512$" "$f" && grep -q "^DSV3: .*the first 1 layer(s) dense of FFN 18432 (the row says so)" "$tmp/rules/inferred.txt"'
check "DeepSeek-V2 without a dense count: first_k_dense_replace 1 of its public config, 3072 shared = 2 experts of 1536" \
	'f=$(model_of DSV2) && grep -q "^  first_dense_layers: 1$" "$f" && grep -q "^  shared_experts: 2$" "$f" &&
	 grep -q "^DSV2: .*first_k_dense_replace of the model.s public config" "$tmp/rules/inferred.txt"'
check "Megatron-Bridge's 'bf16_with_nvfp4_mixed' is NVFP4 (precision fp4), not bf16; a B300 is the b300 profile" \
	'[ "$(field NVFP4 precision)" = fp4 ] && grep -q "^gpu: b300-sxm-288gb$" "$tmp/rules/$(field NVFP4 cluster)"'
check "'14336 per expert' and '32768 per expert': the experts' FFN, every layer MoE" \
	'f=$(model_of MIXTRAL) && grep -q "^ffn_hidden: 14336$" "$f" && grep -q "^  expert_ffn_hidden: 14336$" "$f" &&
	 ! grep -q "first_dense_layers" "$f" && g=$(model_of GROK) && grep -q "^  expert_ffn_hidden: 32768$" "$g" &&
	 grep -q "^  experts: 8$" "$g"'
check "'1408 per expert / 5632 shared' with '60 routed + 1 shared': 60 experts, 4 shared of 1408" \
	'f=$(model_of QWENMOE) && grep -q "^  experts: 60$" "$f" && grep -q "^  shared_experts: 4$" "$f" &&
	 grep -q "^  expert_ffn_hidden: 1408$" "$f"'
check "NeMo: framework nemo, 'recompute: not stated' is none, FP8, the distributed optimizer it states (inferred)" \
	'[ "$(field NEMO-L2 framework)" = nemo ] && [ "$(field NEMO-L2 recompute)" = none ] &&
	 [ "$(field NEMO-L2 precision)" = fp8 ] && [ "$(field NEMO-L2 zero)" = 1 ] && [ -z "$(field NEMO-L2 dp_overlap)" ] &&
	 grep -q "^NEMO-L2: .*recompute .not stated.: none, nemo.s default" "$tmp/rules/inferred.txt"'
check "NeMo 24.07 (NeMo 1.x, Apex distributed_fused_adam): framework nemo-24.07; unversioned NeMo stays nemo" \
	'[ "$(field NEM4 framework)" = nemo-24.07 ] && [ "$(field NEMO-L2 framework)" = nemo ] &&
	 grep -q "^NEM4: .*framework nemo-24.07" "$tmp/rules/inferred.txt"'
check "NeMo's Llama and Nemotron models: no dropout masks (its configs: hidden_dropout 0.0); its GPTConfig keeps them" \
	'grep -q "^dropout: false$" "$(model_of NEM4)" && grep -q "^dropout: false$" "$(model_of NEMO-L2)" &&
	 ! grep -q "^dropout:" "$(model_of GPT5B)"'
check "Nemotron-4: a two-matrix (squared-ReLU) MLP, LayerNorm, rotary, no biases, untied; NeMo TP 8 with SP: TP overlap" \
	'[ "$(field NEM4 tp_overlap)" = true ] && [ -z "$(field NEMO-L2 tp_overlap)" ] && f=$(model_of NEM4) && grep -q "^gated_mlp: false$" "$f" && grep -q "^norm: layernorm$" "$f" &&
	 grep -q "^position_embedding: rotary$" "$f" && grep -q "^bias: false$" "$f" && grep -q "^tied_embeddings: false$" "$f"'
check "NeMo GPTConfig: GELU, LayerNorm, learned positions, biases, tied" \
	'f=$(model_of GPT5B) && grep -q "^position_embedding: learned$" "$f" && grep -q "^norm: layernorm$" "$f" &&
	 grep -q "^bias: true$" "$f" && ! grep -q "gated_mlp: true" "$f" && grep -q "^GPT5B: .*as NeMo.s GPTConfig" "$tmp/rules/inferred.txt"'
check "'distributed optimizer not stated' is no sharding, 'recompute: not stated' none; 400 Gb/s per GPU is 8 NICs of 400" \
	'[ "$(field DDP zero)" = 0 ] && [ "$(field DDP recompute)" = none ] && [ "$(field DDP sequence_parallel)" = false ] &&
	 grep -q "^DDP: .*network 400 Gbit/s per GPU: 8 NICs of 400 Gbit/s a node" "$tmp/rules/inferred.txt" &&
	 grep -A2 "^inter_node:" "$tmp/rules/$(field DDP cluster)" | grep -q "^  nic_bandwidth: 400 Gbit/s$"'
check "FlagPerf: ZeRO-1 and SP from its case scripts; a bare 400 Gb/s is a NIC's; 900 GB/s (450 each direction) is 450" \
	'[ "$(field FLAGPERF zero)" = 1 ] && [ "$(field FLAGPERF sequence_parallel)" = true ] &&
	 grep -q "^FLAGPERF: .*--use-distributed-optimizer" "$tmp/rules/inferred.txt" &&
	 grep -q "^FLAGPERF: .*400 Gbit/s read as one NIC.s speed" "$tmp/rules/inferred.txt" &&
	 grep -q "^FLAGPERF: intra-node 450 GB/s a direction" "$tmp/rules/inferred.txt" &&
	 grep -q "^NEMO-L2: intra-node 450 GB/s a direction" "$tmp/rules/inferred.txt"'
check "InternEvo's ZeRO-1 in groups of 8: ZeRO-1 in mics_group 8 (said), not ZeRO-3/MiCS; the internevo profile; its overlapped sync on" \
	'[ "$(field INTERNEVO zero)" = 1 ] && [ "$(field INTERNEVO mics_group)" = 8 ] && [ "$(field INTERNEVO dp_overlap)" = true ] &&
	 [ "$(field INTERNEVO framework)" = internevo ] &&
	 grep -q "^INTERNEVO: .*ZeRO-1 in groups of 8 of the 64 DP ranks: mics_group 8 with zero 1" "$tmp/rules/inferred.txt"'
check "Megatron-Core core_v0.6.0: the megatron-core-0.6 profile (its allgather MoE dispatcher); unversioned megatron-core stays megatron-lm" \
	'[ "$(field FLAGPERF framework)" = megatron-core-0.6 ] && [ "$(field DDP framework)" = megatron-lm ] &&
	 grep -q "^FLAGPERF: .*framework megatron-core-0.6" "$tmp/rules/inferred.txt"'
check "Megatron-LM 240405 without --moe-grouped-gemm: megatron-core-0.6-sequential (SequentialMLP experts)" \
	'[ "$(field PAIMOE framework)" = megatron-core-0.6-sequential ]'
check "Megatron-FSDP (a Megatron-Bridge run): not PyTorch FSDP; ZeRO-3 of the megatron-fsdp profile, said" \
	'[ "$(field MFSDP zero)" = 3 ] && [ "$(field MFSDP framework)" = megatron-fsdp ] &&
	 grep -q "^MFSDP: .*Megatron-FSDP: the megatron-fsdp profile" "$tmp/rules/inferred.txt"'
# A GB200 NVL72 rack is one NVLink domain of 72 GPUs with one 400 Gb/s NIC
# per GPU, never 8-GPU B200 nodes; without a bundled GB200 profile the row
# is named and left out.
python3 - "$tmp/rules.csv" "$tmp/nvl72.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
r = dict(rows[5], id="NVL72", gpus="144", gpu="GB200 (NVL72)", gpu_mem_GB="186",
         intra_node="NVLink5, 72 GPUs a domain (NVL72)", inter_node="400 Gb/s InfiniBand per GPU", dp="144")
w = csv.DictWriter(open(sys.argv[2], "w", newline=""), fieldnames=list(rows[0].keys()))
w.writeheader()
w.writerow(r)
PY
"$imp" "$tmp/nvl72.csv" --out "$tmp/nvl72" >"$tmp/out" 2>"$tmp/err"
rc=$?
if ls "$root"/gpus/gb200*.yaml >/dev/null 2>&1; then
	check "GB200 NVL72: 72 GPUs a node, 72 NICs of 400 Gbit/s, 900 GB/s NVLink5" \
		'[ $rc -eq 0 ] && grep -q "^gpus_per_node: 72$" "$tmp"/nvl72/clusters/*.yaml &&
		 grep -q "^  nics_per_node: 72$" "$tmp"/nvl72/clusters/*.yaml && grep -q "^  nic_bandwidth: 400 Gbit/s$" "$tmp"/nvl72/clusters/*.yaml'
else
	check "GB200 NVL72 without a GB200 profile: left out, named (not priced as B200)" \
		'[ $rc -eq 1 ] && grep -q "row .NVL72.: column .gpu.: GB200 has no bundled GPU profile" "$tmp/err"'
fi
bad_shape() {
	local name=$1 text=$2 sedexpr=$3
	sed "$sedexpr" "$tmp/rules.csv" | head -2 >"$tmp/bad-rules.csv"
	"$imp" "$tmp/bad-rules.csv" --out "$tmp/bad-rules" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$name" '[ $rc -eq 1 ] && grep -qF "$text" "$tmp/err"'
}
bad_shape "a shared width that is no whole number of experts" "the shared width 2000 is not a whole number of experts of 2048" \
	's|2048 per expert / 2048 shared|2048 per expert / 2000 shared|'
bad_shape "an FFN in words it cannot read" "column 'ffn_hidden': '18432 dense / 2048 wide' is neither a number nor" \
	's|18432 dense / 2048 per expert / 2048 shared|18432 dense / 2048 wide|'
# The recipes' own settings (issue 24 item 6): --dp-overlap turns the
# gradient reduction's overlap on where the profile (megatron-lm) has it
# off; the nemo profile has it on; --no-dp-overlap is off, as before.
pr() { "$bin" predict --model llama2-7b --cluster dgx-h100 --gpus 64 --global-batch 512 --zero 1 "$@" 2>&1; }
t_def=$(pr --format json | jq .iteration_time_s)
t_on=$(pr --dp-overlap --format json | jq .iteration_time_s)
t_off=$(pr --no-dp-overlap --format json | jq .iteration_time_s)
t_nemo=$(pr --framework nemo --format json | jq .iteration_time_s)
t_nemo_off=$(pr --framework nemo --no-dp-overlap --format json | jq .iteration_time_s)
check "--dp-overlap: on over megatron-lm's default (faster), --no-dp-overlap as the default; nemo on unless --no-dp-overlap" \
	'pr | grep -q "dp overlap off" && pr --dp-overlap | grep -q "dp overlap on" && pr --framework nemo | grep -q "dp overlap on" &&
	 awk -v d="$t_def" -v on="$t_on" -v off="$t_off" -v nm="$t_nemo" -v nmo="$t_nemo_off" \
		"BEGIN { exit !(on < d && off == d && nm < nmo) }"'
{ head -1 "$table"; sed -n 2p "$table" | sed 's/,A100-SXM4,/,TPU-v4,/'; sed -n 3p "$table"; } >"$tmp/bad.csv"
rm -rf "$tmp/bad"
"$imp" "$tmp/bad.csv" --out "$tmp/bad" --strict >"$tmp/out" 2>"$tmp/err"
rc=$?
check "--strict stops at the first bad row, writing no runs.csv" \
	'[ $rc -eq 1 ] && grep -q "^import-runs: .*bad.csv:2: row .NAR21-T1-1.: column .gpu." "$tmp/err" && [ ! -e "$tmp/bad/runs.csv" ]'
"$imp" "$table" --o "$tmp/abbrev" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "an option's prefix is not the option ('--o' is not --out)" \
	'[ $rc -eq 2 ] && grep -q "unrecognized arguments: --o" "$tmp/err" && [ ! -e "$tmp/abbrev" ]'
printf 'id,model,cluster\nx,gpt-1.7b,selene\n' >"$tmp/ours.csv"
"$imp" "$tmp/ours.csv" --out "$tmp/o" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "validate's own CSV is not a published-runs table" '[ $rc -eq 1 ] && grep -q "no column .layers. (not a published-runs table)" "$tmp/err"'
finish
