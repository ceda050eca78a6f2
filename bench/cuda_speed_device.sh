#!/bin/bash
# The GPU half of bench/cuda_speed.py in one device call, on a machine
# without amp-opt's build (docs/AmpCompile.md, "GPU tests"). Here:
#   bench/cuda_speed.py prepare .gpu/small --size small
#   bench/cuda_speed.py prepare .gpu/large --size large
#   (cd .gpu && tar cf - small large | xz > bundle.tar.xz)
# There (carry .gpu/bundle.tar.xz; results land in $OUT):
#   bench/cuda_speed_device.sh .gpu/bundle.tar.xz 120 70 mlp transformer gpt cnn
# Arguments: the archive, the small run's time limit and each large
# model's (seconds, 0 to skip), then the large models to run.
set -u
# The device image's python3 holds numpy and torch; PYTHON names another.
python=${PYTHON:-python3}
export PYTHONUNBUFFERED=1
archive=$1 small_limit=$2 large_limit=$3
shift 3
folder=$(dirname "$archive")
out=${OUT:-results}
mkdir -p "$out"
start=$(date +%s)
tar xJf "$archive" -C "$folder" || exit 1
nvidia-smi -L
# cuDNN is opened by name at run time; PyTorch's wheels carry both.
libs=$(find /usr/local /opt /usr/lib \( -name libcudnn.so.9 -o \
  -name libcublasLt.so.13 \) 2>/dev/null | xargs -rn1 dirname | sort -u |
  paste -sd:)
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
status=0
if [ "$small_limit" != 0 ] && [ -d "$folder/small" ]; then
  timeout "$small_limit" "$python" bench/cuda_speed.py run "$folder/small" \
    --out "$out" > "$out/small.log" 2>&1 || status=1
  echo "small done at $(( $(date +%s) - start )) s"
  grep -v '^{' "$out/small.log" | tail -40
fi
for model in "$@"; do
  [ "$large_limit" != 0 ] && [ -d "$folder/large" ] || break
  timeout "$large_limit" "$python" bench/cuda_speed.py run "$folder/large" \
    --timing-steps 5 --models "$model" --out "$out" \
    > "$out/large_$model.log" 2>&1 || status=1
  echo "large $model done at $(( $(date +%s) - start )) s"
  grep -v '^{' "$out/large_$model.log" | tail -14
done
exit $status
