#!/usr/bin/env bash
# Sweep speed (a benchmark, not a test): 10,000 cells of fixed plans, and
# 100 cells that each run optimize. Usage: bench-sweep.sh [PLAN_CLI] [SOURCE_ROOT]
set -euo pipefail
bin=$(realpath "${1:-build/plan-cli}")
cd "${2:-.}"
export PLAN_CLI_PATH=$PWD
t0=$(date +%s.%N)
"$bin" sweep --model gpt-1.7b,gpt-3.6b,gpt-7.5b,gpt-18.4b,gpt-39.1b,gpt-76.1b,gpt-145.6b,gpt-310.1b,gpt-529.6b,gpt-1t \
	--cluster selene --gpus 64,128,256,512,768,1024,1536,2048,3072,4096 \
	--nic-bandwidth 25Gbit/s,50Gbit/s,100Gbit/s,150Gbit/s,200Gbit/s,250Gbit/s,300Gbit/s,400Gbit/s,800Gbit/s,1600Gbit/s \
	--compressor none,ae-50,ae-100,ae-256,topk-1,topk-5,topk-10,quantize-2,quantize-4,quantize-8 \
	--tp 8 --global-batch 3072 --metric iteration_time,speedup --format csv >/tmp/plan-cli-bench-sweep.csv
t1=$(date +%s.%N)
cells=$(($(wc -l </tmp/plan-cli-bench-sweep.csv) - 1))
echo "predict sweep: $cells cells in $(awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.3f\", b - a }") s"
t0=$(date +%s.%N)
"$bin" sweep --mode optimize --model gpt-1.7b,gpt-3.6b,gpt-7.5b,gpt-18.4b,gpt-39.1b,gpt-76.1b,gpt-145.6b,gpt-310.1b,gpt-529.6b,gpt-1t \
	--cluster selene --gpus 64,128,256,512,768,1024,1536,2048,3072,4096 --global-batch 3072 \
	--metric iteration_time,plan --format csv >/tmp/plan-cli-bench-sweep-opt.csv
t1=$(date +%s.%N)
cells=$(($(wc -l </tmp/plan-cli-bench-sweep-opt.csv) - 1))
echo "optimize sweep: $cells cells in $(awk -v a="$t0" -v b="$t1" "BEGIN { printf \"%.3f\", b - a }") s"
rm -f /tmp/plan-cli-bench-sweep.csv /tmp/plan-cli-bench-sweep-opt.csv
