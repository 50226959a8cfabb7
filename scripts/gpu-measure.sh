#!/usr/bin/env bash
# The GPU measurements the issues ask for, in one device call (docs/gpu.md, section 3).
#
#   bash scripts/gpu-measure.sh TAG [STEP...]      (run from the repository root on the lent machine)
#
# TAG names the files (h100, h200). STEPs, in the order given (default: campaign special):
#   campaign  perfcast campaign run --backend cuda (it runs the full bench suite first; the archive's
#             device.yaml is that profile), profiled with ncu
#   special   ncu metrics and the SASS source page of the transcendental and n-body kernels (perfcast project
#             --sass-counts)
#   l2        ncu's L2 metrics (from the L1 alone, and all) for each campaign kernel, as l2-TAG.csv (issue 26)
#   bench     perfcast bench --backend cuda on its own, with the sweep as CSV
#   stream    BabelStream (UoB-HPC/BabelStream, its src/ carried in .babelstream/src), built with nvcc for this
#             GPU and run in double and in single precision: the peer's DRAM figures beside the bench's read, copy
#             and triad (run the bench step in the same call), as stream-TAG.txt
#   tuning    perfcast validate tuning through NVIDIA's OpenCL, where the machine has its ICD (TUNING_RUNS
#             independent runs, default 7)
#   hub       the benchmark hub's convolution and dedispersion tuned live (scripts/hub-tune.py; the hub's
#             kernels/ in .hub/kernels, KernelTuner's wheels in .whl/), HUB_S seconds each (default 150, at
#             most what is left), the spaces in HUB_KERNELS (empty or unset: both), by HUB_STRATEGY: a KernelTuner
#             strategy (default genetic_algorithm) or perfcast's hierarchical; the caches come back as hub-TAG.tgz
#   conversions  int-to-float and float-to-int conversions per SM and clock, beside an FADD reference
#             (scripts/gpu_conversions.py, CuPy; seconds), as conversions-TAG.json (issue 25: dedispersion's bound)
#   program   perfcast campaign run --timer nsys on the campaign's CUDA driver (issue 27), with the nsys found
#             on PATH or in the CUDA and Nsight folders, and libdw from .gpulib/ for its importer
#
# A step may take at most STEP_S seconds (default: what is left), the campaign at most CAMPAIGN_S, so that the
# steps after it still run.
#
# Needs $OUT, and the wheels in .whl/ where perfcast's dependencies are missing (carry: [".whl"]; docs/gpu.md,
# section 1). Every step runs under one deadline (BUDGET seconds from the start, default 560: the call's limit
# is 600), stopped with SIGINT so that an interrupted campaign keeps what it measured; its working folder (under
# WORK, default /tmp/perfcast-gpu) then comes back as one .tgz. At most 8 files come back from $OUT: the log,
# and the steps' (campaign 1, special 3, l2 1, bench 2, stream 1, hub 1, tuning 1, conversions 1, program 1): choose
# steps that fit; the
# program step, last, says so and stops when 8 are there already.
set -u
tag=${1:?usage: scripts/gpu-measure.sh TAG [campaign|special|bench|tuning ...]}
shift
steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(campaign special)
out=${OUT:?OUT must name the folder the results go to}
deadline=$(( $(date +%s) + ${BUDGET:-560} ))
log=$out/gpu-$tag.log
work=${WORK:-/tmp/perfcast-gpu}
mkdir -p "$work"

say() { echo "$*" | tee -a "$log"; }

# Runs "$@" until the deadline (or CAP seconds, where set); logs its output, its exit status and its seconds.
timed() {
    local left=$(( deadline - $(date +%s) ))
    if [ "$left" -le 10 ]; then say "-- skipped (no time left): $*"; return 124; fi
    if [ -n "${CAP:-}" ] && [ "$CAP" -lt "$left" ]; then left=$CAP; fi
    local start=$(date +%s) rc
    say "-- $(date -u +%H:%M:%S) ($left s left): $*"
    timeout --signal=INT --kill-after=20 "$left" "$@" >>"$log" 2>&1
    rc=$?
    say "-- exit $rc after $(( $(date +%s) - start )) s"
    return $rc
}

if [ -d .whl ]; then
    # pip where the machine has it; else each wheel unpacked as it is (a wheel is a zip of its installed files).
    if ! python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl >>"$log" 2>&1; then
        say "pip could not install .whl/: unpacking the wheels into /tmp/site instead"
        for wheel in .whl/*.whl; do python3 -m zipfile -e "$wheel" /tmp/site >>"$log" 2>&1; done
    fi
fi
export PYTHONPATH=/tmp/site:$PWD/src
python3 -c "import pydantic, perfcast" >>"$log" 2>&1 \
    || { say "perfcast does not import: carry the wheels in .whl/ (docs/gpu.md section 1)"; exit 1; }
{
    echo "== perfcast GPU measurements, tag $tag, steps ${steps[*]}, commit $(git rev-parse --short HEAD 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    nvcc --version | tail -1; ncu --version | tail -1; python3 --version; python3 -m perfcast --version
    lscpu | grep -E '^Model name|^CPU\(s\)'
    # ncu needs the performance counters: root, or a driver loaded with RmProfilingAdminOnly 0 (ERR_NVGPUCTRPERM).
    echo "user id $(id -u); $(grep -s RmProfilingAdminOnly /proc/driver/nvidia/params || echo 'RmProfilingAdminOnly: not readable')"
    # The L2 metric perfcast may take instead of lts__t_bytes (which counts the L2's DRAM side too: triad's
    # L2 bytes came out 1.5x its L1 requests on the H200): does this ncu know the traffic from L1?
    echo "ncu metrics of L2 traffic from L1: $(ncu --query-metrics 2>/dev/null | grep -oE '^lts__t_(sectors|bytes)_srcunit_tex[a-z_]*' | sort -u | tr '\n' ' ')"
} >>"$log" 2>&1

for step in "${steps[@]}"; do
    say "== $step"
    case $step in
    campaign)
        archive=$work/campaign-$tag.zip
        # One run of the bench (the default is a second after the kernels): a lent GPU is not shared the way a
        # 2-core VM is, and the minutes go to ncu.
        CAP=${CAMPAIGN_S:-${STEP_S:-}} timed python3 -m perfcast campaign run --backend cuda --device-runs 1 -o "$archive"
        rc=$?
        if [ $rc -eq 0 ]; then
            cp "$archive" "$out/"
            # The L2 figure the bench took, and how (the L2 read sweep's plateau, or the catalog's), into the log.
            python3 -c "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('device.yaml').decode())" \
                "$archive" | grep -i -B2 -A6 "l2" >>"$log" 2>&1
        elif [ -d "$archive.partial" ]; then
            tar czf "$out/campaign-$tag.partial.tgz" -C "$work" "campaign-$tag.zip.partial"
            say "unfinished (exit $rc): what it measured is in campaign-$tag.partial.tgz; unpacked beside the" \
                "archive's path, the same command resumes it"
        fi
        ;;
    special)
        CAP=${STEP_S:-} timed python3 -m perfcast profile --tool ncu --sass-counts -o "$out/special-$tag.yaml" -- \
            python3 -m perfcast.campaign.cuda transcendental=16777216,nbody=32768
        ;;
    l2)
        # L2 bytes that came from the L1 alone (lts__t_sectors_srcunit_tex*) beside lts__t_bytes, which also counts
        # the L2's DRAM side (triad's L2 bytes were 1.5x its L1 bytes on the H200), per campaign kernel at the
        # campaign's sizes (issue 26): which metric the profile's N+_L2 should read.
        listing=$(python3 -c "import json, sys, zipfile; m = json.loads(zipfile.ZipFile(sys.argv[1]).read('manifest.json'));
print(','.join(f'{k}={v[\"n\"]}' for k, v in m['kernels'].items()))" "$work/campaign-$tag.zip" 2>/dev/null)
        [ -n "$listing" ] || say "no campaign archive: the l2 step takes the campaign's default sizes (check them against the archive's)"
        listing=${listing:-triad=16777216,stencil7=256,sor_redblack=4096,sgemm_naive=1024,sgemm_tiled=1024,histogram256=67108864,reduce_sum=33554432,transcendental=16777216,nbody=32768,spmv_csr=4194304,hash_int=16777216,horner_fp64=8388608}
        known=$(ncu --query-metrics 2>/dev/null | awk '{print $1}')
        metrics=gpu__time_duration.sum
        for m in l1tex__t_bytes lts__t_bytes lts__t_sectors lts__t_sectors_srcunit_tex lts__t_sectors_srcunit_tex_op_read \
            lts__t_sectors_srcunit_tex_op_write lts__t_sectors_srcunit_tex_lookup_hit lts__t_sectors_srcunit_tex_lookup_miss \
            dram__bytes dram__bytes_read dram__bytes_write; do
            # Where the query printed nothing usable, ask for them all: ncu then names the one it does not know.
            { [ -z "$known" ] || grep -qx "$m" <<<"$known"; } && metrics+=",$m.sum"
        done
        say "metrics: $metrics; kernels: $listing"
        CAP=${STEP_S:-} timed bash -c "ncu --csv --page raw --print-units base --clock-control none --metrics $metrics \
            python3 -m perfcast.campaign.cuda $listing >'$out/l2-$tag.csv'"
        ;;
    bench)
        timed python3 -m perfcast bench --backend cuda -o "$out/bench-$tag.yaml" --csv "$out/bench-$tag.csv"
        ;;
    stream)
        # The peer users trust for a GPU's memory bandwidth, in the call that runs the bench (docs/validation/gpu-dram:
        # the bench's one-float triads had reached 83 % and 72 % of the Hoppers' spec, BabelStream's double 90 %).
        if [ ! -f .babelstream/src/main.cpp ]; then
            say "no .babelstream/src/main.cpp (docs/gpu.md section 1): stream step skipped"
            continue
        fi
        arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '. ')
        # libnvidia-ml.so (BabelStream reads the memory clock through NVML) is the toolkit's stub at link time.
        stubs=$(dirname "$(command -v nvcc)")/../lib64/stubs
        rm -f "$work/babelstream"  # a warm machine keeps WORK: never run an earlier call's build
        CAP=${STEP_S:-} timed nvcc -O3 -std=c++17 -arch=sm_${arch:-90} --extended-lambda -DCUDA -DDEFAULT \
            -DGRID_STRIDE -DUNROLL_FACTOR=4 -I.babelstream/src -I.babelstream/src/cuda .babelstream/src/main.cpp \
            .babelstream/src/cuda/CUDAStream.cu -L"$stubs" -lnvidia-ml -o "$work/babelstream"
        # 2^27 elements per array: 1 GiB of doubles each, 20x the Hoppers' 50 MiB L2.
        for precision in "" --float; do
            [ -x "$work/babelstream" ] || break
            CAP=${STEP_S:-} timed bash -c "'$work/babelstream' --arraysize 134217728 --numtimes 50 $precision \
                >>'$out/stream-$tag.txt' 2>&1"
        done
        ;;
    hub)
        # Both caches come back in one file (hub-TAG.tgz), packed again after each kernel: at most 8 files return.
        # HUB_KERNELS (empty or unset: both) picks the spaces: one long search can matter more than two cut
        # short. The search's own limit leaves 25 s of HUB_S, or of the time to the deadline, to KernelTuner's
        # start and the cache (half of it below 50 s), so a search the deadline would cut ends by itself instead.
        caches=()
        for kernel in ${HUB_KERNELS:-convolution-milo dedispersion-milo}; do
            cap=$(( deadline - $(date +%s) ))
            [ "${HUB_S:-150}" -lt "$cap" ] && cap=${HUB_S:-150}
            CAP=$cap timed python3 scripts/hub-tune.py .hub/kernels "$kernel" $(( cap >= 50 ? cap - 25 : (cap > 1 ? cap / 2 : 1) )) \
                "$work/$kernel-$tag.json" --strategy "${HUB_STRATEGY:-genetic_algorithm}"
            [ -f "$work/$kernel-$tag.json" ] && caches+=("$kernel-$tag.json")
            [ ${#caches[@]} -gt 0 ] && tar czf "$out/hub-$tag.tgz" -C "$work" "${caches[@]}"
        done
        ;;
    tuning)
        # NVIDIA's OpenCL where the driver ships its library but the image lacks the ICD file naming it.
        if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
            mkdir -p /tmp/icd && echo libnvidia-opencl.so.1 >/tmp/icd/nvidia.icd && export OCL_ICD_VENDORS=/tmp/icd
            say "OpenCL: no /etc/OpenCL/vendors/nvidia.icd; OCL_ICD_VENDORS=/tmp/icd names libnvidia-opencl.so.1"
        fi
        if python3 -c "import pyopencl as cl, sys; sys.exit(not any('NVIDIA' in p.name for p in cl.get_platforms()))" \
            >>"$log" 2>&1; then
            timed python3 -m perfcast validate tuning --runs "${TUNING_RUNS:-7}" --budget 50 --nsim 262144 --npos 8192 --device NVIDIA \
                --stores "$work/tuning" --markdown "$out/tuning-$tag.md" --json
        else
            say "no NVIDIA OpenCL platform here (the driver's ICD file may be missing): tuning skipped"
        fi
        ;;
    program)
        # nsys is not always on PATH where ncu is: look in the usual CUDA and Nsight folders.
        if ! command -v nsys >/dev/null; then
            found=$(ls -d /usr/local/cuda*/bin/nsys /opt/nvidia/nsight-systems*/bin/nsys /usr/local/cuda*/nsight-systems*/bin/nsys \
                /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -1)
            [ -n "$found" ] && export PATH=$(dirname "$found"):$PATH
        fi
        # Nsight Compute's importer needs elfutils' libdw, which the image lacks: carried in .gpulib (docs/gpu.md).
        libs=${LD_LIBRARY_PATH:-}
        [ -d .gpulib ] && libs=$PWD/.gpulib/root/usr/lib/x86_64-linux-gnu${libs:+:$libs}
        importer=$(timeout 30 find / -xdev -name 'QdstrmImporter*' 2>/dev/null | head -1)
        say "nsys: $(command -v nsys || echo 'not found'); $(nsys --version 2>&1 | head -1);" \
            "QdstrmImporter (nsys needs it to make a report): ${importer:-none found}"
        if [ "$(ls "$out" | wc -l)" -ge 8 ]; then
            say "8 files in \$OUT already (at most 8 come back): program step skipped"
            continue
        fi
        if [ -z "$importer" ]; then
            say "no QdstrmImporter: nsys cannot make a report here; program step skipped"
            continue
        fi
        LD_LIBRARY_PATH=$libs CAP=${STEP_S:-} timed python3 -m perfcast campaign run --timer nsys -o "$work/program-$tag.zip" -- \
            python3 -m perfcast.campaign.cuda triad=16777216,sgemm_tiled=1024
        if [ -f "$work/program-$tag.zip" ]; then
            cp "$work/program-$tag.zip" "$out/"
        elif [ -d "$work/program-$tag.zip.partial" ]; then
            # The trace, nsys's own output and the program's, for the reader's tests and for the note.
            tar czf "$out/program-$tag.partial.tgz" -C "$work" "program-$tag.zip.partial"
        fi
        ;;
    conversions)
        CAP=${STEP_S:-} timed python3 scripts/gpu_conversions.py --out "$out/conversions-$tag.json"
        ;;
    *)
        say "unknown step $step (campaign, special, l2, bench, stream, hub, tuning, conversions, program)"
        ;;
    esac
done
say "== done $(date -u +%H:%M:%S); files: $(cd "$out" && ls | tr '\n' ' ')"
