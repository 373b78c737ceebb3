#!/usr/bin/env bash
# What one call on the GPU machine runs (see shared/device.md): from the
# repository root there, with .carry/ carried (bash scripts/carry.sh here).
#   bash scripts/gpu-session.sh PART...
# Parts, each logging under $OUT (or ./gpu-out without one; a sanitizer's output,
# up to 4 MB, goes beside its summary, in X.full.log for X.log):
#   tests     the SASS check (tests/sass_check.sh) and every GPU test
#             (tl-gpu-tests, the 200-shape sweep included), in TEST_JOBS processes
#             at once (default 6; run_tests_parallel.py deals the cases by the
#             durations in test-durations.log, which carry.sh gathers from
#             results/raw/; the jobs stop after TEST_TIMEOUT_S, default 480, and the
#             summary names what they left) -> sass.log, tests.log (the runner's
#             summary), tests.tgz (each job's cases and log, the SASS files)
#   sanitize  memcheck, racecheck and synccheck on the [ops], [small] and
#             [runtime] tests; memcheck and racecheck on 4 sweep shapes
#             (seq_len <= 100)
#                                                                -> sanitize.log
#   accuracy  tlc and SDPA's FlashAttention-2 on the same inputs with large
#             logits (Q, K x 8), against fp64 (accuracy_peer.py) -> accuracy.jsonl
#   example   examples/mha_jit twice on a fresh disk cache (cold, then warm)
#                                                                -> example.log
#   bench     tl-bench-gpu and the peers (sdpa_peer.py) on the same shapes
#                                                                -> bench.jsonl
#   bench256  head dim 256: tuned, alternatives and peers           -> bench256.jsonl
#   sweep     forward and backward configurations at S = 1024 and 4096
#                                                                -> sweep.jsonl
#   mha-autotune  tl-bench-gpu --autotune: tl::autotune picks the forward's and
#             the backward's configurations per shape (bench's shapes and D = 256),
#             every candidate's time printed; then the peers on the same
#             shapes                                        -> mha-autotune.jsonl
#   fwd-autotune  the same with --autotune=forward: the forward's configuration
#             only (the backward runs tunedConfig's)            -> fwd-autotune.jsonl
#   pingpong  the pingpong forward's tests under the sanitizers, then
#             tl-bench-gpu --autotune=forward with its pingpong candidates
#             (PINGPONG_SHAPES="B,H,S,D ..." replaces the shapes), then the peers
#                                  -> pingpong-tests.log, sanitize-pingpong.log, pingpong.jsonl
#   det-keys-fastest  the deterministic backward with key blocks fastest and
#             heads fastest (--deterministic --bwd-keys-fastest=0|1, twice each,
#             alternating; session 28 timed them side by side: deterministicConfig
#             keeps keys fastest at D = 256 non-causal from S = 4096 only), beside the
#             default (DET_KEYS_SHAPES="B,H,S,D ..." replaces the shapes)
#                                                        -> det-keys-fastest.jsonl
#   short-autotune  tl-bench-gpu --autotune below S = 1024, where tunedConfig's
#             short rules were last searched before much of the wgmma code
#             generation (session 27 searched the forward at D = 128 and the reference
#             shape only), then the peers
#             (SHORT_AUTOTUNE_SHAPES="B,H,S,D ..." replaces the shapes)
#                                                          -> short-autotune.jsonl
#   short-table  tl-bench-gpu (tunedConfig) twice at short-autotune's shapes,
#             then the peers                                   -> short-table.jsonl
#   gemm      tl-bench-gemm (autotuned; wgmma, TMA, a producer warpgroup; without it
#             (TLC_WARP_SPECIALIZE=0), cp.async (TLC_TMA=0) and mma.sync
#             (TLC_WGMMA=0) at the best configurations) and
#             cuBLAS (gemm_peer.py) on the same shapes           -> gemm.jsonl
#   copy      tl-bench-copy (the tile copy: TMA load and store, autotuned)
#             and torch's copy (copy_peer.py) on the same shapes -> copy.jsonl
#   deterministic  the in_turn and deterministic MHA tests, then tl-bench-gpu
#             with and without --deterministic (the backward summing dQ in
#             key-block order), twice each, alternating, then the peers
#             (DETERMINISTIC_SHAPES="B,H,S,D ..." replaces the shapes)
#                                   -> tests-deterministic.log, deterministic.jsonl
#   sanitize-deterministic  memcheck, racecheck and synccheck on those tests
#                                                 -> sanitize-deterministic.log
#   det-short the deterministic backward at short lengths (DET_SHORT_SHAPES,
#             default 8,32,256,64 8,32,512,64 8,16,512,128): the default and
#             --deterministic (since session 26 the staged wgmma one with the
#             producer taking the turns), the staged one with the producer and the
#             dQ tile at 128x128 and 128x64 blocks, and at D = 64 the reference's
#             program in turns (--bwd 64,64,128,1), twice each; the peers
#                                                              -> det-short.jsonl
#   keys-fastest  the MHA test of the backward's grid with key blocks fastest, then
#             tl-bench-gpu with it and without (--bwd-keys-fastest=1|0, twice
#             each, alternating), then the peers; the test under memcheck,
#             racecheck and synccheck (KEYS_FASTEST_SHAPES="B,H,S,D ..." replaces
#             the shapes)   -> tests-keys-fastest.log, keys-fastest.jsonl,
#                                                  sanitize-keys-fastest.log
#   p-while-dp  session 31's untimed work: the tests of the staged backward in
#             FlashAttention-3's loop orders and of attention in bf16, then
#             tl-bench-gpu with P computed while dP runs and without
#             (--bwd-p-while-dp=1|0, twice each, alternating), then the peers;
#             the tests under memcheck, racecheck and synccheck; then
#             tl-bench-gpu --bf16 on the same shapes (P_WHILE_DP_SHAPES="B,H,S,D ..."
#             replaces the shapes)      -> tests-p-while-dp.log, p-while-dp.jsonl,
#                                          sanitize-p-while-dp.log, bf16.jsonl
#   dq-first  the staged wgmma backward with its dQ gemm first, waited for alone
#             (AttentionConfig::bwdDqFirst, session 34): tl-bench-gpu
#             --bwd-dq-first=0|1 (twice each, alternating) and the peers
#             (DQ_FIRST_SHAPES="B,H,S,D ..." replaces the shapes), then the
#             FlashAttention-3-order backward test (which runs it), also under
#             memcheck, racecheck and synccheck
#                          -> dq-first.jsonl, tests-dq-first.log, sanitize-dq-first.log
#   no-lsr    tl-bench-gpu with LLVM's loop strength reduction and without it
#             (TLC_LLVM_OPTIONS=-disable-lsr), the default run again after it
#             (the noise), on the tuned configurations and the reference's
#             (--fwd/--bwd)                                     -> no-lsr.jsonl
#   stage-o   tl-bench-gpu with the forward's O through a shared tile and without
#             (--stage-o=1|0, twice each, alternating), then the peers; the
#             stage_O MHA test under memcheck, racecheck and synccheck
#             (STAGE_O_SHAPES="B,H,S,D ..." replaces the shapes)
#                                       -> stage-o.jsonl, sanitize-stage-o.log
#   overlap   tl-bench-gpu with the forward's loop in FlashAttention-3's order and
#             without (--overlap=1|0, twice each, alternating), then the peers; the
#             overlap MHA test under memcheck, racecheck and synccheck
#             (OVERLAP_SHAPES="B,H,S,D ..." replaces the shapes)
#                                       -> overlap.jsonl, sanitize-overlap.log
#   bwd-wgmma tl-bench-gpu with the staged backward's gemms on wgmma and without
#             (--bwd-wgmma=1|0, twice each, alternating; the D = 64 staged one
#             on wgmma beside them), then the peers; the wgmma backward's MHA
#             test under memcheck, racecheck and synccheck
#             (BWD_WGMMA_SHAPES="B,H,S,D ..." replaces the shapes, BWD_WGMMA_ROUNDS=1
#             runs each once)
#                                   -> bwd-wgmma.jsonl, sanitize-bwd-wgmma.log
#   sanitize-tuned  memcheck, racecheck and synccheck on the tuned configurations'
#             MHA test, the overlapped forward's and the wgmma backward's
#                                                        -> sanitize-tuned.log
#   dq-tile   tl-bench-gpu with the backward adding dQ a tile at a time and an
#             element at a time (--dq-tile=1|0, twice each, alternating), then the
#             peers; the tile atomic_add's op test and MHA tests (the producer
#             backward's, which hands the tile to the producer, included) on the
#             GPU, then under memcheck, racecheck and synccheck (DQ_TILE_SHAPES="B,H,S,D
#             ..." replaces the shapes)
#                       -> tests-dq-tile.log, dq-tile.jsonl, sanitize-dq-tile.log
#   dq-mma-tiles  tl-bench-gpu with the dQ accumulator in accumulator tile order (16-byte
#             vector reductions) and in the reference's order (--dq-mma-tiles=1|0, twice
#             each, alternating), then the peers; the same once each with --deterministic;
#             the op test and the MHA test under memcheck, racecheck and synccheck
#             (DQ_MMA_TILES_SHAPES="B,H,S,D ..." replaces the shapes)
#                     -> dq-mma-tiles.jsonl, dq-mma-tiles-deterministic.jsonl,
#                        sanitize-dq-mma-tiles.log
#   bwd-producer  tl-bench-gpu with the staged backward's loads by a producer
#             warpgroup and by its own threads (--bwd-producer=1|0, twice each,
#             alternating), the producer with two stages of loads ahead
#             (--bwd-staged at tunedConfig's blocks, 2 stages), then the peers; the
#             producer backward's MHA test on the GPU and under memcheck, racecheck
#             and synccheck (BWD_PRODUCER_SHAPES="B,H,S,D ..." replaces the shapes)
#                                   -> bwd-producer.jsonl, tests-bwd-producer.log,
#                                      sanitize-bwd-producer.log
#   table     tl-bench-gpu twice and the peers on the README's speed table's shapes
#             (TABLE_SHAPES="B,H,S,D ..." replaces them)            -> table.jsonl
#   convert-dq  tl-bench-gpu with the backward's main kernel converting dQ itself
#             and with the postprocess (--convert-dq=1|0, twice each, alternating),
#             then the peers; the last_to_arrive op test and the converting MHA
#             test under memcheck, racecheck and synccheck (CONVERT_DQ_SHAPES="B,H,S,D
#             ..." replaces the shapes)   -> convert-dq.jsonl, sanitize-convert-dq.log
#   ab        tl-bench-gpu of an earlier build (.carry/before: its library and
#             tl-bench-gpu, staged by TLC_CARRY_BEFORE=DIR bash scripts/carry.sh)
#             and of this one, alternating twice, each with a JIT cache of its
#             own; then the peers (AB_SHAPES="B,H,S,D ..." replaces the shapes,
#             AB_ARGS="..." adds tl-bench-gpu options to both, e.g. --deterministic;
#             AB_GEMM="ARGS" runs tl-bench-gemm ARGS of both too)
#                                                       -> ab.jsonl, ab-gemm.jsonl
#   ncu-ref   Nsight Compute (clocks left alone) on the reference shape's four
#             kernels, the first non-causal launch of each: speed of light,
#             occupancy, launch statistics, warp states         -> ncu-ref.log
#   ncu-dq    Nsight Compute on the backward's main kernel (first non-causal
#             launch) adding dQ a tile at a time and an element at a time, at
#             NCU_DQ_SHAPES (default 4,32,4096,64 4,16,4096,128): speed of light,
#             warp states, memory, stall sampling by SASS line, L2 reductions
#                                                                -> ncu-dq.log
#   det-tile  the deterministic backward with dQ handed to the producer as a tile
#             (the producer takes the turns) and with element adds in turn
#             (--deterministic --dq-tile=1|0, twice each, alternating), the default
#             backward beside them, then the peers; the producer backward's MHA
#             test (deterministic tile included) on the GPU and under memcheck,
#             racecheck and synccheck (DET_TILE_SHAPES="B,H,S,D ..." replaces the
#             shapes)            -> det-tile.jsonl, sanitize-det-tile.log
#   ncu-bwd   Nsight Compute on the backward's main kernel and on cuDNN's (the
#             fourth launch whose name has bprop, dgrad or bwd, non-causal) at
#             NCU_BWD_SHAPES (default 4,16,4096,128 4,32,4096,64): speed of
#             light, occupancy, launch statistics, warp states, memory, L2
#             reductions: what issue 17's backward rows need  -> ncu-bwd.log
#   elide-async  the wgmma kernels with tl-elide-barriers seeing through the async
#             proxy (TLC_ELIDE_ASYNC_BARRIERS=1: the staged backward's loop loses two
#             of its five consumer barriers an iteration): the tuned, bf16 and
#             FlashAttention-3-order MHA tests and the sweep with it, the first three
#             under memcheck, racecheck and synccheck with it, then tl-bench-gpu with
#             and without it (twice each, alternating) and the peers
#             (ELIDE_ASYNC_SHAPES="B,H,S,D ..." replaces the shapes)
#                       -> tests-elide-async.log, sanitize-elide-async.log, elide-async.jsonl
#   codegen-ab  tl-bench-gpu by default (stmatrix stores and low-word wgmma
#             descriptors since session 36), with TLC_STMATRIX=0, with
#             TLC_LOW_WORD_DESCRIPTORS=0 and with both, in turn, twice, then the
#             peers (CODEGEN_AB_SHAPES="B,H,S,D ..." replaces 4,16,4096,128
#             4,32,4096,64 4,16,4096,256 8,32,256,64)            -> codegen-ab.jsonl
#   ncu-stalls  Nsight Compute's stall reasons per issued instruction, the share
#             of cycles issuing, the scheduler statistics (warps, eligible warps) and
#             the tensor pipe's busy share (the gmma pipe where ncu has it) on the
#             backward's main kernel and cuDNN's, and on the forward's kernel and
#             cuDNN's, at NCU_STALL_SHAPES (default 4,16,4096,128 4,16,4096,256
#             4,32,4096,64; non-causal unless NCU_CAUSAL=1): what issues our warps'
#             instructions more slowly than cuDNN's (session 32). NCU_STALL_VARIANTS
#             ("KERNEL[ FLAGS];...", default "flash_bwd;flash_fwd") names our runs,
#             e.g. "flash_bwd;flash_bwd --bwd-p-while-dp=1"
#                                                 -> ncu-stalls.log, metrics.txt
#   ncu-opcodes  executed instructions per SASS opcode and stall samples per SASS
#             line (SourceCounters) of the backward's main kernel and cuDNN's, at
#             NCU_OPCODE_SHAPES (default 4,16,4096,128 4,32,4096,64; non-causal unless
#             NCU_CAUSAL=1), in one archive (the machine returns 8 files):
#             opcodes-{tlc,cudnn}-B_H_S_D_cC.txt and sass-{tlc,cudnn}-B_H_S_D_cC.csv
#             (C: NCU_CAUSAL); scripts/ncu_report.py opcodes|hot reads them (session 33)
#                                            -> ncu-opcodes.tgz, ncu-opcodes.log
#   ncu-fwd   the same on the forward's kernel and cuDNN's (the fourth whose name
#             has fprop or fwd) at NCU_FWD_SHAPES (default 4,16,4096,128
#             4,32,4096,64 8,32,256,64)                         -> ncu-fwd.log
#   ncu-l2-state  the forward's kernel and cuDNN's under ncu as the queued timings
#             run them, after their L2 flush (--cache-control none: the L2 full of
#             the flush's dirty lines; our 40th launch, after a cuMemsetD8Async, cuDNN's
#             4th, after do_bench's zero_), and after ncu's own flush (--cache-control
#             all), at NCU_L2_SHAPES (default 8,32,256,64), application replay (every
#             pass a run of its own, so no pass sees another's L2): whether the queued
#             time's part outside ncu's clean-L2 duration is the kernel's or the
#             launch's (written in session 37, not yet run)      -> ncu-l2-state.log
#   early-hand-back  the deterministic backward with the producer handing its dQ
#             tile back once read, before its turn passes (TLC_EARLY_TILE_HAND_BACK=1,
#             session 38, off by default; session 39 timed it 1-6% slower at
#             D = 128): the in_turn, deterministic and dQ-first MHA tests with it
#             on the GPU (and the long lengths' test) and under memcheck, racecheck
#             and synccheck (EARLY_HAND_BACK_TESTS_S, default 300, limits the
#             first), then
#             tl-bench-gpu --deterministic with it =0 and =1 (twice each,
#             alternating), the default backward once, and the peers
#             (EARLY_HAND_BACK_SHAPES="B,H,S,D ..." replaces the shapes)
#                   -> tests-early-hand-back.log, sanitize-early-hand-back.log,
#                      early-hand-back.jsonl
#   sanitize-gemm  memcheck, racecheck and synccheck on the GEMM kernel's
#             transposes/dtypes/ragged-edges test (cp.async), its TMA and
#             producer-warpgroup test, its use_swizzle test, the RS wgmma
#             two-gemm test, the tile copy's test and the tuned attention
#             configurations (the wgmma forward)          -> sanitize-gemm.log
set -uo pipefail
out=${OUT:-$PWD/gpu-out}
mkdir -p "$out"
# shellcheck source=scripts/gpu-call-env.sh
source "$(dirname "$0")/gpu-call-env.sh" # into .carry/, the library unpacked, the paths set
shapes=(16,32,1024,64 4,32,4096,64 1,32,16384,64 16,16,1024,128 4,16,4096,128 1,16,16384,128
        8,32,256,64)
# Below S = 1024 (short-autotune, short-table).
shortShapes=(${SHORT_AUTOTUNE_SHAPES:-8,32,256,64 8,32,512,64 8,16,512,128 8,32,256,128
  8,16,256,256 8,16,512,256})

# peer SCRIPT LOG SHAPE...: a peer script on the same shapes, appended to LOG.
peer() {
  local script=$1 log=$2 args=()
  shift 2
  for shape in "$@"; do args+=(--shape "$shape"); done
  python3 "$script" "${args[@]}" 2>&1 | tee -a "$log"
}
# alternating FLAG LOG SHAPE...: tl-bench-gpu with --FLAG=VALUE for each of
# $VALUES (default "0 1 0 1": twice each, alternating), appended to LOG, then
# the peers on the same shapes.
alternating() {
  local flag=$1 log=$2 value
  shift 2
  for value in ${VALUES:-0 1 0 1}; do
    ./bin/tl-bench-gpu --$flag=$value "$@" 2>&1 | tee -a "$log"
  done
  peer sdpa_peer.py "$log" "$@"
}
# sanitized LOG FILTER: the GPU tests FILTER picks under memcheck, racecheck
# and synccheck, each one's summary appended to LOG and its whole output (the
# first 4 MB) to LOG's .full.log beside it.
sanitized() {
  local log=$1 filter=$2 whole tool
  local -A pids
  whole=$(mktemp -d)
  # The three tools at once (each its own process on the one GPU), logged in this order.
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool ./bin/tl-gpu-tests "$filter" > "$whole/$tool" 2>&1 &
    pids[$tool]=$!
  done
  for tool in memcheck racecheck synccheck; do
    wait "${pids[$tool]}"
    echo "--- $tool (exit $?)" | tee -a "$log"
    tail -4 "$whole/$tool" | tee -a "$log"
    { echo "--- $tool: $filter"; head -c 4000000 "$whole/$tool"; } >> "${log%.log}.full.log"
  done
  rm -rf "$whole"
}

# variableTrial VARIABLE NAME [SHAPE...]: a code-generation variable that is
# off by default, =1: the tuned, bf16 and FlashAttention-3-order MHA tests and
# the sweep with it, the first three under memcheck, racecheck and synccheck
# with it, then tl-bench-gpu with it =0 and =1 (twice each, alternating; the
# kernel cache keys the variable) and the peers, on SHAPEs
# (default: the issue's rows)  -> tests-NAME.log, sanitize-NAME.log, NAME.jsonl
variableTrial() {
  local variable=$1 name=$2 value
  shift 2
  local test="MHA in the tuned configurations*,MHA in bf16*,MHA backward in FlashAttention-3*"
  local args=("$@")
  ((${#args[@]})) || args=(4,16,4096,128 4,32,4096,64 1,32,16384,64 4,16,4096,256 16,32,1024,64
    8,32,256,64)
  # The sweep's 200 shapes take longer than a call: TRIAL_TESTS_S (default
  # 200) seconds of them, the count passed in the log's last lines.
  timeout "${TRIAL_TESTS_S:-200}" env "$variable=1" ./bin/tl-gpu-tests \
    "$test,MHA random shape sweep*" > "$out/tests-$name.log" 2>&1
  echo "tl-gpu-tests exit $? (124: cut at ${TRIAL_TESTS_S:-200} s)" | tee -a "$out/tests-$name.log"
  tail -4 "$out/tests-$name.log"
  (export "$variable=1" && sanitized "$out/sanitize-$name.log" "$test")
  for value in 0 1 0 1; do
    echo "{\"$variable\": $value}" | tee -a "$out/$name.jsonl"
    env "$variable=$value" ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/$name.jsonl"
  done
  peer sdpa_peer.py "$out/$name.jsonl" "${args[@]}"
}

# The ncu parts (ncu-bwd, ncu-stalls, ncu-opcodes, ncu-fwd) profile the non-causal kernels, or
# with NCU_CAUSAL=1 the causal ones (tl-bench-gpu --causal=1 runs that mask alone, so that its
# kernel's first launch is the causal one; sdpa_peer.py --causal 1).
ncuCausal=${NCU_CAUSAL:-0}
[[ $ncuCausal == [01] ]] || { echo "NCU_CAUSAL wants 0 or 1, not $ncuCausal"; exit 2; }
# What ncu-fwd and ncu-bwd measure: speed of light, occupancy, launch
# statistics, warp states, memory, L2 reductions and atomics, instructions.
ncuSections=(--section SpeedOfLight --section Occupancy --section LaunchStats
  --section WarpStateStats --section MemoryWorkloadAnalysis
  --metrics lts__t_sectors_op_red.sum,lts__t_sectors_op_atom.sum,smsp__inst_executed.sum)
# The in_turn and deterministic MHA tests (the producer warpgroup's turns
# among them; `deterministic` adds the long lengths', too slow to sanitize).
deterministicTests="in_turn*,MHA backward in deterministic*,MHA backward with a producer \
warpgroup*,MHA deterministic at short lengths*"

for part in "$@"; do
  echo "=== $part ($(date +%T))"
  case $part in
  deterministic)
    ./bin/tl-gpu-tests "$deterministicTests,MHA at long lengths*" > "$out/tests-deterministic.log" 2>&1
    tail -4 "$out/tests-deterministic.log"
    : > "$out/deterministic.jsonl"
    args=(${DETERMINISTIC_SHAPES:-4,32,4096,64 4,16,4096,128 4,16,4096,256 16,16,1024,128 8,32,256,64})
    for round in 1 2; do
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/deterministic.jsonl"
      ./bin/tl-bench-gpu --deterministic "${args[@]}" 2>&1 | tee -a "$out/deterministic.jsonl"
    done
    peer sdpa_peer.py "$out/deterministic.jsonl" "${args[@]}" ;;
  keys-fastest)
    test="MHA backward with the grid's key blocks fastest*"
    ./bin/tl-gpu-tests "$test" > "$out/tests-keys-fastest.log" 2>&1
    tail -4 "$out/tests-keys-fastest.log"
    args=(${KEYS_FASTEST_SHAPES:-16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128
      4,16,4096,256})
    alternating bwd-keys-fastest "$out/keys-fastest.jsonl" "${args[@]}"
    sanitized "$out/sanitize-keys-fastest.log" "$test" ;;
  p-while-dp)
    test="MHA backward in FlashAttention-3*,MHA in bf16*"
    ./bin/tl-gpu-tests "$test" > "$out/tests-p-while-dp.log" 2>&1
    tail -4 "$out/tests-p-while-dp.log"
    args=(${P_WHILE_DP_SHAPES:-4,32,4096,64 1,32,16384,64 16,32,1024,64 4,16,4096,128
      16,16,1024,128})
    alternating bwd-p-while-dp "$out/p-while-dp.jsonl" "${args[@]}"
    sanitized "$out/sanitize-p-while-dp.log" "$test"
    ./bin/tl-bench-gpu --bf16 "${args[@]}" 2>&1 | tee "$out/bf16.jsonl" ;;
  dq-first)
    # The timings first: the tests and sanitizers take most of a call.
    alternating bwd-dq-first "$out/dq-first.jsonl" \
      ${DQ_FIRST_SHAPES:-4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64}
    test="MHA backward in FlashAttention-3*"
    ./bin/tl-gpu-tests "$test" > "$out/tests-dq-first.log" 2>&1
    tail -4 "$out/tests-dq-first.log"
    sanitized "$out/sanitize-dq-first.log" "$test" ;;
  det-short)
    # The deterministic backward at short lengths: deterministicConfig's
    # choice, the staged one on wgmma with the producer taking the turns with
    # the dQ tile on either block shape (128x128 blocks do not fit shared
    # memory at D = 128), and at D = 64 the reference's program with element
    # adds in turn (deterministicConfig's choice before session 26).
    args=(${DET_SHORT_SHAPES:-8,32,256,64 8,32,512,64 8,16,512,128})
    for round in 1 2; do
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/det-short.jsonl"
      ./bin/tl-bench-gpu --deterministic "${args[@]}" 2>&1 | tee -a "$out/det-short.jsonl"
      for shape in "${args[@]}"; do
        blocks=(128,64,256,1)
        [[ $shape == *,64 ]] && blocks+=(128,128,256,1)
        for b in "${blocks[@]}"; do
          ./bin/tl-bench-gpu --deterministic --bwd-staged $b --bwd-wgmma=1 --bwd-producer=1 \
            --dq-tile=1 "$shape" 2>&1 |
            sed "s/\"peer\": \"tlc\"/\"peer\": \"tlc-det-staged-$b\"/" |
            tee -a "$out/det-short.jsonl"
        done
        [[ $shape == *,64 ]] &&
          ./bin/tl-bench-gpu --deterministic --bwd 64,64,128,1 "$shape" 2>&1 |
          sed "s/\"peer\": \"tlc\"/\"peer\": \"tlc-det-reference\"/" |
          tee -a "$out/det-short.jsonl"
      done
    done
    peer sdpa_peer.py "$out/det-short.jsonl" "${args[@]}" ;;
  sanitize-deterministic)
    sanitized "$out/sanitize-deterministic.log" "$deterministicTests" ;;
  early-hand-back)
    # The deterministic tests and the dQ-first one (tunedConfig's long backwards in turns, at a
    # short length); on the GPU also the long lengths' (the same bits twice), too slow to
    # sanitize. EARLY_HAND_BACK_TESTS_S (default 300) seconds for the tests.
    test="$deterministicTests,MHA backward with its dQ gemm first*"
    TLC_EARLY_TILE_HAND_BACK=1 timeout "${EARLY_HAND_BACK_TESTS_S:-300}" ./bin/tl-gpu-tests \
      "$test,MHA at long lengths*" > "$out/tests-early-hand-back.log" 2>&1
    echo "tl-gpu-tests exit $? (124: cut at ${EARLY_HAND_BACK_TESTS_S:-300} s)" |
      tee -a "$out/tests-early-hand-back.log"
    tail -4 "$out/tests-early-hand-back.log"
    (export TLC_EARLY_TILE_HAND_BACK=1 && sanitized "$out/sanitize-early-hand-back.log" "$test")
    read -ra args <<< "${EARLY_HAND_BACK_SHAPES:-4,16,4096,128 4,32,4096,64 16,16,1024,128 \
8,32,256,64}"
    : > "$out/early-hand-back.jsonl"
    for value in 0 1 0 1; do
      echo "{\"TLC_EARLY_TILE_HAND_BACK\": $value}" | tee -a "$out/early-hand-back.jsonl"
      TLC_EARLY_TILE_HAND_BACK=$value ./bin/tl-bench-gpu --deterministic "${args[@]}" 2>&1 |
        tee -a "$out/early-hand-back.jsonl"
    done
    echo '{"default": 1}' | tee -a "$out/early-hand-back.jsonl"
    ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/early-hand-back.jsonl"
    peer sdpa_peer.py "$out/early-hand-back.jsonl" "${args[@]}" ;;
  no-lsr)
    args=(4,32,4096,64 4,16,4096,128 4,16,4096,256 16,32,1024,64 8,32,256,64)
    for variant in default no-lsr default; do
      llvm=
      [[ $variant == no-lsr ]] && llvm=-disable-lsr
      echo "{\"variant\": \"$variant\"}" | tee -a "$out/no-lsr.jsonl"
      TLC_LLVM_OPTIONS=$llvm ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/no-lsr.jsonl"
      TLC_LLVM_OPTIONS=$llvm ./bin/tl-bench-gpu --fwd 64,64,32,0 --bwd 128,128,32,0 8,32,256,64 \
        2>&1 | tee -a "$out/no-lsr.jsonl"
    done ;;
  stage-o)
    args=(${STAGE_O_SHAPES:-8,32,256,64 16,32,1024,64 4,32,4096,64 4,16,4096,128 4,16,4096,256})
    alternating stage-o "$out/stage-o.jsonl" "${args[@]}"
    sanitized "$out/sanitize-stage-o.log" \
      "MHA forward writing O through*,MHA in the tuned configurations*" ;;
  overlap)
    args=(${OVERLAP_SHAPES:-8,32,256,64 16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128
      16,16,1024,256})
    alternating overlap "$out/overlap.jsonl" "${args[@]}"
    sanitized "$out/sanitize-overlap.log" "MHA forward in FlashAttention-3*" ;;
  bwd-wgmma)
    args=(${BWD_WGMMA_SHAPES:-8,32,256,64 4,32,4096,64 16,16,1024,128 4,16,4096,128
      16,16,1024,256 4,16,4096,256})
    variants=(0 1 0 1)
    [[ ${BWD_WGMMA_ROUNDS:-2} == 1 ]] && variants=(0 1)
    for variant in "${variants[@]}"; do
      ./bin/tl-bench-gpu --bwd-wgmma=$variant "${args[@]}" 2>&1 | tee -a "$out/bwd-wgmma.jsonl"
    done
    ./bin/tl-bench-gpu --bwd-staged 64,64,128,1 --bwd-wgmma=1 "${args[@]:0:2}" 2>&1 |
      tee -a "$out/bwd-wgmma.jsonl"
    peer sdpa_peer.py "$out/bwd-wgmma.jsonl" "${args[@]}"
    sanitized "$out/sanitize-bwd-wgmma.log" "MHA backward staged with its gemms on wgmma*" ;;
  dq-tile)
    test="atomic_add of a tile*,MHA backward adding dQ*,MHA backward with a producer warpgroup*"
    ./bin/tl-gpu-tests "$test" 2>&1 | tail -4 | tee "$out/tests-dq-tile.log"
    args=(${DQ_TILE_SHAPES:-8,32,256,64 4,32,4096,64 16,16,1024,128 4,16,4096,128})
    VALUES="1 0 1 0" alternating dq-tile "$out/dq-tile.jsonl" "${args[@]}"
    sanitized "$out/sanitize-dq-tile.log" "$test" ;;
  table)
    args=(${TABLE_SHAPES:-4,32,4096,64 4,16,4096,128 4,16,4096,256 8,32,256,64})
    for round in 1 2; do
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/table.jsonl"
    done
    peer sdpa_peer.py "$out/table.jsonl" "${args[@]}" ;;
  dq-mma-tiles)
    args=(${DQ_MMA_TILES_SHAPES:-8,32,256,64 4,32,4096,64 4,16,4096,128 4,16,4096,256})
    VALUES="1 0 1 0" alternating dq-mma-tiles "$out/dq-mma-tiles.jsonl" "${args[@]}"
    for value in 1 0; do
      ./bin/tl-bench-gpu --deterministic --dq-mma-tiles=$value "${args[@]}" 2>&1 |
        tee -a "$out/dq-mma-tiles-deterministic.jsonl"
    done
    sanitized "$out/sanitize-dq-mma-tiles.log" \
      "atomic_add of a gemm accumulator*,MHA backward with dQ in accumulator tile order*" ;;
  convert-dq)
    args=(${CONVERT_DQ_SHAPES:-8,32,256,64 16,32,1024,64 4,32,4096,64 16,16,1024,128
      4,16,4096,128 4,16,4096,256})
    VALUES="1 0 1 0" alternating convert-dq "$out/convert-dq.jsonl" "${args[@]}"
    sanitized "$out/sanitize-convert-dq.log" "last_to_arrive*,MHA backward converting dQ*" ;;
  bwd-producer)
    test="MHA backward with a producer warpgroup*"
    ./bin/tl-gpu-tests "$test" 2>&1 | tail -4 | tee "$out/tests-bwd-producer.log"
    args=(${BWD_PRODUCER_SHAPES:-16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128
      4,16,4096,256})
    for round in 1 2; do
      for value in 1 0; do
        ./bin/tl-bench-gpu --bwd-producer=$value "${args[@]}" 2>&1 | tee -a "$out/bwd-producer.jsonl"
      done
    done
    for shape in "${args[@]}"; do # two stages ahead, at tunedConfig's blocks
      case $shape in
      *,64) blocks=128,128,256,2 ;;
      *,128) blocks=128,64,256,2 ;;
      *) continue ;;
      esac
      ./bin/tl-bench-gpu --bwd-staged $blocks --bwd-wgmma=1 --bwd-producer=1 "$shape" 2>&1 |
        sed 's/"peer": "tlc"/"peer": "tlc-stages2"/' | tee -a "$out/bwd-producer.jsonl"
    done
    peer sdpa_peer.py "$out/bwd-producer.jsonl" "${args[@]}"
    sanitized "$out/sanitize-bwd-producer.log" "$test" ;;
  ab)
    [[ -d before ]] || { echo "no .carry/before: see scripts/carry.sh"; continue; }
    [[ -f before/lib/libtlc.so.gz ]] && gunzip -f before/lib/libtlc.so.gz
    args=(${AB_SHAPES:-8,32,256,64 16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128
      4,16,4096,256})
    caches=("$(mktemp -d)" "$(mktemp -d)")
    for round in 1 2; do
      TLC_CACHE_DIR=${caches[0]} LD_LIBRARY_PATH=$PWD/before/lib ./before/bin/tl-bench-gpu \
        ${AB_ARGS:-} "${args[@]}" 2>&1 | sed 's/"peer": "tlc"/"peer": "tlc-before"/' | tee -a "$out/ab.jsonl"
      TLC_CACHE_DIR=${caches[1]} ./bin/tl-bench-gpu ${AB_ARGS:-} "${args[@]}" 2>&1 | tee -a "$out/ab.jsonl"
      if [[ -n ${AB_GEMM:-} ]]; then
        TLC_CACHE_DIR=${caches[0]} LD_LIBRARY_PATH=$PWD/before/lib ./before/bin/tl-bench-gemm \
          $AB_GEMM 2>&1 | sed 's/"tlc": "gemm/"tlc": "before-gemm/' | tee -a "$out/ab-gemm.jsonl"
        TLC_CACHE_DIR=${caches[1]} ./bin/tl-bench-gemm $AB_GEMM 2>&1 | tee -a "$out/ab-gemm.jsonl"
      fi
    done
    peer sdpa_peer.py "$out/ab.jsonl" "${args[@]}" ;;
  ncu-ref)
    for kernel in flash_fwd flash_bwd_prep flash_bwd flash_bwd_post; do
      echo "--- $kernel" | tee -a "$out/ncu-ref.log"
      timeout 120 ncu --clock-control none --kernel-id "::regex:^$kernel\$:1" \
        --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section WarpStateStats ./bin/tl-bench-gpu 8,32,256,64 2>&1 |
        grep -v '^{' | tee -a "$out/ncu-ref.log"
    done ;;
  ncu-dq)
    for shape in ${NCU_DQ_SHAPES:-4,32,4096,64 4,16,4096,128}; do
      for tile in 1 0; do
        echo "--- flash_bwd $shape --dq-tile=$tile" | tee -a "$out/ncu-dq.log"
        timeout 200 ncu --clock-control none --kernel-id "::regex:^flash_bwd\$:1" \
          --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis \
          --section SourceCounters --section LaunchStats --metrics \
          lts__t_sectors_op_red.sum,lts__t_requests_op_red.sum,lts__t_sectors_op_atom.sum,\
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__inst_executed_op_global_red.sum,\
lts__average_t_sector_hit_rate_realtime.pct \
          ./bin/tl-bench-gpu --dq-tile=$tile "$shape" 2>&1 | grep -v '^{' | tee -a "$out/ncu-dq.log"
      done
    done ;;
  det-tile)
    test="MHA backward with a producer warpgroup*"
    ./bin/tl-gpu-tests "$test" 2>&1 | tail -4 | tee "$out/tests-det-tile.log"
    args=(${DET_TILE_SHAPES:-16,16,1024,128 4,32,4096,64 4,16,4096,128})
    for round in 1 2; do
      for value in 1 0; do
        ./bin/tl-bench-gpu --deterministic --dq-tile=$value "${args[@]}" 2>&1 |
          sed "s/\"peer\": \"tlc\"/\"peer\": \"tlc-det-tile$value\"/" | tee -a "$out/det-tile.jsonl"
      done
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/det-tile.jsonl"
    done
    peer sdpa_peer.py "$out/det-tile.jsonl" "${args[@]}"
    sanitized "$out/sanitize-det-tile.log" "$test" ;;
  ncu-bwd)
    for shape in ${NCU_BWD_SHAPES:-4,16,4096,128 4,32,4096,64}; do
      echo "--- tlc flash_bwd $shape causal=$ncuCausal" | tee -a "$out/ncu-bwd.log"
      timeout 200 ncu --clock-control none --kernel-id "::regex:^flash_bwd\$:1" "${ncuSections[@]}" \
        ./bin/tl-bench-gpu --causal=$ncuCausal "$shape" 2>&1 | grep -v '^{' |
        tee -a "$out/ncu-bwd.log"
      echo "--- cuDNN backward $shape causal=$ncuCausal" | tee -a "$out/ncu-bwd.log"
      timeout 200 ncu --clock-control none -k "regex:bprop|dgrad|bwd" --launch-skip 3 \
        --launch-count 1 "${ncuSections[@]}" python3 sdpa_peer.py --shape "$shape" \
        --causal $ncuCausal \
        --peer sdpa-cudnn 2>&1 | grep -v '^{' | tee -a "$out/ncu-bwd.log"
    done ;;
  elide-async)
    variableTrial TLC_ELIDE_ASYNC_BARRIERS elide-async ${ELIDE_ASYNC_SHAPES:-} ;;
  codegen-ab)
    args=(${CODEGEN_AB_SHAPES:-4,16,4096,128 4,32,4096,64 4,16,4096,256 8,32,256,64})
    for round in 1 2; do
      for variables in "" TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0 \
        "TLC_STMATRIX=0 TLC_LOW_WORD_DESCRIPTORS=0"; do
        echo "{\"variables\": \"$variables\", \"round\": $round}" | tee -a "$out/codegen-ab.jsonl"
        env $variables ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/codegen-ab.jsonl"
      done
    done
    peer sdpa_peer.py "$out/codegen-ab.jsonl" "${args[@]}" ;;
  ncu-stalls)
    ncu --query-metrics > "$out/metrics.txt" 2>&1
    tensor=$(grep -o "^sm__pipe_tensor_op_gmma_cycles_active\b" "$out/metrics.txt" | head -1)
    metrics=smsp__inst_executed.sum,gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed
    metrics=$metrics,smsp__issue_active.avg.pct_of_peak_sustained_active
    [[ -n $tensor ]] && metrics=$metrics,$tensor.avg.pct_of_peak_sustained_active
    stalls=(--section SchedulerStats
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,$metrics")
    for shape in ${NCU_STALL_SHAPES:-4,16,4096,128 4,16,4096,256 4,32,4096,64}; do
      IFS=';' read -ra variants <<< "${NCU_STALL_VARIANTS:-flash_bwd;flash_fwd}"
      for variant in "${variants[@]}"; do
        variant=${variant#"${variant%%[! ]*}"} # "a; b": no leading space
        kernel=${variant%% *} flags=${variant#$kernel}
        echo "--- tlc $kernel$flags $shape causal=$ncuCausal" | tee -a "$out/ncu-stalls.log"
        timeout 100 ncu --clock-control none --kernel-id "::regex:^$kernel\$:1" "${stalls[@]}" \
          ./bin/tl-bench-gpu --causal=$ncuCausal $flags "$shape" 2>&1 | grep -v '^{' |
          tee -a "$out/ncu-stalls.log"
      done
      for pass in bprop fprop; do
        echo "--- cuDNN $pass $shape causal=$ncuCausal" | tee -a "$out/ncu-stalls.log"
        timeout 100 ncu --clock-control none -k "regex:$pass" --launch-skip 3 --launch-count 1 \
          "${stalls[@]}" python3 sdpa_peer.py --shape "$shape" --causal $ncuCausal \
          --peer sdpa-cudnn 2>&1 |
          grep -v '^{' | tee -a "$out/ncu-stalls.log"
      done
    done ;;
  ncu-opcodes)
    reports=$(mktemp -d)
    sources=(--section SourceCounters --import-source no --metrics sass__inst_executed_per_opcode)
    for shape in ${NCU_OPCODE_SHAPES:-4,16,4096,128 4,32,4096,64}; do
      name=${shape//,/_}_c$ncuCausal
      echo "--- tlc flash_bwd $shape causal=$ncuCausal" | tee -a "$out/ncu-opcodes.log"
      timeout 100 ncu -f --clock-control none --kernel-id "::regex:^flash_bwd\$:1" "${sources[@]}" \
        -o "$reports/tlc-$name" ./bin/tl-bench-gpu --causal=$ncuCausal "$shape" 2>&1 |
        grep -v '^{' | tee -a "$out/ncu-opcodes.log"
      echo "--- cuDNN backward $shape causal=$ncuCausal" | tee -a "$out/ncu-opcodes.log"
      timeout 100 ncu -f --clock-control none -k "regex:bprop" --launch-skip 3 --launch-count 1 \
        "${sources[@]}" -o "$reports/cudnn-$name" python3 sdpa_peer.py --shape "$shape" \
        --causal $ncuCausal --peer sdpa-cudnn 2>&1 | grep -v '^{' | tee -a "$out/ncu-opcodes.log"
      for report in tlc-$name cudnn-$name; do
        ncu -i "$reports/$report.ncu-rep" --page raw --print-metric-instances details \
          --metrics sass__inst_executed_per_opcode > "$reports/opcodes-$report.txt" \
          2>> "$out/ncu-opcodes.log"
        ncu -i "$reports/$report.ncu-rep" --page source --csv --print-source sass \
          > "$reports/sass-$report.csv" 2>> "$out/ncu-opcodes.log"
      done
    done
    rm -f "$reports"/*.ncu-rep
    tar czf "$out/ncu-opcodes.tgz" -C "$reports" .
    rm -rf "$reports" ;;
  ncu-fwd)
    for shape in ${NCU_FWD_SHAPES:-4,16,4096,128 4,32,4096,64 8,32,256,64}; do
      echo "--- tlc flash_fwd $shape causal=$ncuCausal" | tee -a "$out/ncu-fwd.log"
      timeout 150 ncu --clock-control none --kernel-id "::regex:^flash_fwd\$:1" \
        "${ncuSections[@]}" ./bin/tl-bench-gpu --causal=$ncuCausal "$shape" 2>&1 | grep -v '^{' |
        tee -a "$out/ncu-fwd.log"
      echo "--- cuDNN forward $shape causal=$ncuCausal" | tee -a "$out/ncu-fwd.log"
      timeout 150 ncu --clock-control none -k "regex:fprop|fwd" --launch-skip 3 --launch-count 1 \
        "${ncuSections[@]}" python3 sdpa_peer.py --shape "$shape" --causal $ncuCausal \
        --peer sdpa-cudnn \
        2>&1 | grep -v '^{' | tee -a "$out/ncu-fwd.log"
    done ;;
  ncu-l2-state)
    l2=(--replay-mode application --metrics gpu__time_duration.sum,dram__bytes_read.sum,\
dram__bytes_write.sum,lts__t_sector_hit_rate.pct)
    # tl-bench-gpu's flash_fwd launches: 25 timed one at a time (GPUKernel::benchmark, 5 + 20),
    # then timeQueuedColdL2's 5 unflushed warm-ups and 5 flushed estimates, then the flushed
    # repeats (QueuedTiming.cpp): the 40th is the 5th repeat. do_bench: one call, then 5
    # estimates each after its zero_: --launch-skip 3 is the third.
    for shape in ${NCU_L2_SHAPES:-8,32,256,64}; do
      for control in none all; do
        echo "--- tlc flash_fwd $shape cache-control=$control" | tee -a "$out/ncu-l2-state.log"
        timeout 100 ncu --clock-control none --cache-control $control \
          --kernel-id "::regex:^flash_fwd\$:40" "${l2[@]}" ./bin/tl-bench-gpu --causal=0 "$shape" \
          2>&1 | grep -v '^{' | tee -a "$out/ncu-l2-state.log"
        echo "--- cuDNN forward $shape cache-control=$control" | tee -a "$out/ncu-l2-state.log"
        timeout 100 ncu --clock-control none --cache-control $control -k "regex:fprop|fwd" \
          --launch-skip 3 --launch-count 1 "${l2[@]}" python3 sdpa_peer.py --shape "$shape" \
          --causal 0 --peer sdpa-cudnn 2>&1 | grep -v '^{' | tee -a "$out/ncu-l2-state.log"
      done
    done ;;
  sanitize-tuned)
    sanitized "$out/sanitize-tuned.log" "MHA in the tuned configurations*,MHA forward in \
FlashAttention-3*,MHA backward staged with its gemms on wgmma*" ;;
  tests)
    # The machine returns 8 files: the SASS files and the jobs' go back in one archive.
    bash sass_check.sh bin "$out/tests/sass" 2>&1 | tee "$out/sass.log"
    python3 run_tests_parallel.py --jobs "${TEST_JOBS:-6}" --timings test-durations.log \
      --timeout "${TEST_TIMEOUT_S:-480}" --out "$out/tests" ./bin/tl-gpu-tests 2>&1 |
      tee "$out/tests.log"
    tar czf "$out/tests.tgz" -C "$out/tests" . && rm -rf "$out/tests" ;;
  sanitize)
    sanitized "$out/sanitize.log" "[ops],[small],[runtime]"
    for tool in memcheck racecheck; do # awkward shapes (S = 1, primes, block +- 1)
      echo "--- $tool, sweep shapes" | tee -a "$out/sanitize.log"
      TLC_SWEEP_COUNT=4 TLC_SWEEP_MAX_SEQ=100 timeout 140 compute-sanitizer --tool $tool \
        ./bin/tl-gpu-tests "[sweep]" 2>&1 | grep --line-buffered -E "^sweep|SUMMARY|passed|failed" |
        tee -a "$out/sanitize.log"
    done ;;
  accuracy)
    python3 accuracy_peer.py --tool ./bin/tl-attention-files 2>&1 | tee "$out/accuracy.jsonl" ;;
  example)
    cache=$(mktemp -d)
    for run in cold warm; do
      echo "--- $run" | tee -a "$out/example.log"
      TLC_CACHE_DIR=$cache ./bin/mha_jit 2>&1 | tee -a "$out/example.log"
    done ;;
  bench)
    ./bin/tl-bench-gpu 2>&1 | tee "$out/bench.jsonl"
    peer sdpa_peer.py "$out/bench.jsonl" "${shapes[@]}" ;;
  bench256)
    # Head dim 256: the tuned configuration and its alternatives, then the peers.
    ./bin/tl-bench-gpu 16,16,1024,256 4,16,4096,256 2>&1 | tee "$out/bench256.jsonl"
    for cfg in 64,64,128,1 128,64,256,1 64,32,128,2; do
      ./bin/tl-bench-gpu --fwd $cfg 16,16,1024,256 4,16,4096,256 2>&1 | tee -a "$out/bench256.jsonl"
    done
    for cfg in 64,64,256,1 64,32,256,2 32,32,256,1; do
      ./bin/tl-bench-gpu --bwd-staged $cfg 16,16,1024,256 4,16,4096,256 2>&1 |
        tee -a "$out/bench256.jsonl"
    done
    peer sdpa_peer.py "$out/bench256.jsonl" 16,16,1024,256 4,16,4096,256 ;;
  sweep)
    # M,N,THREADS,STAGES; fwd and bwd swept separately (the other at its tuned value).
    for cfg in 64,64,128,0 64,64,128,1 64,64,128,2 128,64,256,1 128,32,256,1 64,32,128,1; do
      ./bin/tl-bench-gpu --fwd $cfg 16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128 \
        2>&1 | tee -a "$out/sweep.jsonl"
    done
    # The backward: the reference's program, then the staged one (P and dS in
    # shared memory, flashattn_bwd_staged), which tunedConfig picks.
    for cfg in 64,32,128,1 64,64,128,1; do
      ./bin/tl-bench-gpu --bwd $cfg 16,32,1024,64 4,32,4096,64 16,16,1024,128 4,16,4096,128 \
        2>&1 | tee -a "$out/sweep.jsonl"
    done
    for cfg in 128,128,256,1 128,64,256,1 128,64,256,2 64,64,128,2; do
      ./bin/tl-bench-gpu --bwd-staged $cfg 16,32,1024,64 4,32,4096,64 16,16,1024,128 \
        4,16,4096,128 2>&1 | tee -a "$out/sweep.jsonl"
    done ;;
  fwd-autotune)
    ./bin/tl-bench-gpu --autotune=forward "${shapes[@]}" 16,16,1024,256 4,16,4096,256 2>&1 |
      tee "$out/fwd-autotune.jsonl"
    peer sdpa_peer.py "$out/fwd-autotune.jsonl" "${shapes[@]}" 16,16,1024,256 4,16,4096,256 ;;
  pingpong)
    # The forward's warpgroups issuing its gemms in turn: the tests, the
    # sanitizers on them, then tl-bench-gpu --autotune=forward (its spaces
    # hold pingpong candidates) and the peers.
    ./bin/tl-gpu-tests "MHA forward with its warpgroups*" 2>&1 | tee "$out/pingpong-tests.log" |
      tail -4
    sanitized "$out/sanitize-pingpong.log" "MHA forward with its warpgroups*"
    args=(${PINGPONG_SHAPES:-4,16,4096,128 16,16,1024,128 4,32,4096,64 4,16,4096,256 8,32,256,64})
    ./bin/tl-bench-gpu --autotune=forward "${args[@]}" 2>&1 | tee "$out/pingpong.jsonl"
    peer sdpa_peer.py "$out/pingpong.jsonl" "${args[@]}" ;;
  det-keys-fastest)
    args=(${DET_KEYS_SHAPES:-4,16,4096,256 16,16,1024,256 4,16,4096,128})
    for round in 1 2; do
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/det-keys-fastest.jsonl"
      for value in 0 1; do
        ./bin/tl-bench-gpu --deterministic --bwd-keys-fastest=$value "${args[@]}" 2>&1 |
          tee -a "$out/det-keys-fastest.jsonl"
      done
    done ;;
  short-table)
    args=("${shortShapes[@]}")
    for round in 1 2; do
      ./bin/tl-bench-gpu "${args[@]}" 2>&1 | tee -a "$out/short-table.jsonl"
    done
    peer sdpa_peer.py "$out/short-table.jsonl" "${args[@]}" ;;
  short-autotune)
    args=("${shortShapes[@]}")
    ./bin/tl-bench-gpu --autotune "${args[@]}" 2>&1 | tee "$out/short-autotune.jsonl"
    peer sdpa_peer.py "$out/short-autotune.jsonl" "${args[@]}" ;;
  mha-autotune)
    ./bin/tl-bench-gpu --autotune "${shapes[@]}" 16,16,1024,256 4,16,4096,256 2>&1 |
      tee "$out/mha-autotune.jsonl"
    peer sdpa_peer.py "$out/mha-autotune.jsonl" "${shapes[@]}" 16,16,1024,256 4,16,4096,256 ;;
  gemm)
    gemm_shapes=(4096,4096,4096 8192,8192,8192 128,4096,4096 1024,4096,4096 128,8192,8192)
    configs=()
    for c in 128,128,64,128,3 128,128,64,128,4 128,256,64,256,3 128,128,32,128,3 \
      128,128,32,128,4 256,128,64,256,3 128,256,32,256,4 64,128,64,128,4 \
      128,256,64,256,3,1 256,128,64,256,3,1 128,128,64,128,4,1 \
      128,256,64,256,3,1,8 256,128,64,256,3,1,8 128,256,32,256,4,1,8 256,128,64,256,3,1,16; do
      configs+=(--config $c)
    done
    ./bin/tl-bench-gemm "${configs[@]}" "${gemm_shapes[@]}" 2>&1 | tee "$out/gemm.jsonl"
    # The autotuner's choices are in the disk cache now: a second run times
    # only the winners ("autotune_cache_hit": true).
    ./bin/tl-bench-gemm "${configs[@]}" 4096,4096,4096 2>&1 |
      sed 's/"tlc": "gemm/"tlc": "gemm-again/' | tee -a "$out/gemm.jsonl"
    TLC_WARP_SPECIALIZE=0 ./bin/tl-bench-gemm --config 128,256,64,256,3 \
      --config 256,128,64,256,3 4096,4096,4096 8192,8192,8192 2>&1 |
      sed 's/"tlc": "gemm/"tlc": "gemm-no-producer-warp/' | tee -a "$out/gemm.jsonl"
    TLC_TMA=0 ./bin/tl-bench-gemm --config 128,256,32,256,4 --config 128,256,64,256,3 \
      4096,4096,4096 8192,8192,8192 2>&1 | sed 's/"tlc": "gemm/"tlc": "gemm-cp.async/' |
      tee -a "$out/gemm.jsonl"
    TLC_WGMMA=0 ./bin/tl-bench-gemm --dtype f16 --config 128,128,32,128,3 \
      --config 128,256,64,256,2 4096,4096,4096 2>&1 | sed 's/"tlc": "gemm/"tlc": "gemm-mma.sync/' |
      tee -a "$out/gemm.jsonl"
    peer gemm_peer.py "$out/gemm.jsonl" "${gemm_shapes[@]}" ;;
  copy)
    copy_shapes=(8192,8192 16384,8192 4096,4096)
    ./bin/tl-bench-copy "${copy_shapes[@]}" 2>&1 | tee "$out/copy.jsonl"
    peer copy_peer.py "$out/copy.jsonl" "${copy_shapes[@]}" ;;
  sanitize-gemm)
    for tool in memcheck racecheck synccheck; do
      echo "--- $tool" | tee -a "$out/sanitize-gemm.log"
      for test in "gemm kernel: transposes*" "gemm kernel: TMA*" "gemm kernel: use_swizzle*" \
        "gemm with A from registers*" "[copy]" "MHA in the tuned configurations*"; do
        compute-sanitizer --tool $tool ./bin/tl-gpu-tests "$test" 2>&1 |
          tail -4 | tee -a "$out/sanitize-gemm.log"
      done
    done ;;
  *)
    echo "unknown part: $part" ;;
  esac
done
