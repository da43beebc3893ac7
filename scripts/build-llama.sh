#!/usr/bin/env bash
# Build llama-cpp-python once, portably, into a repo-local wheel folder and install it.
#
# Why portable: a native build (GGML_NATIVE=ON, the default) emits every instruction
# the build machine's CPU advertises. On VMs that advertise AMX without enabling it the
# first decode dies with "Illegal instruction" (tilezero in ggml_backend_amx_mul_mat).
# The machines that run this project differ from session to session, so we target
# x86-64-v3 (AVX2/FMA/F16C), which every machine here has, and nothing newer.
#
# Why a repo-local folder: pip's own wheel cache is keyed by the sdist, not by
# CMAKE_ARGS, so a native wheel cached earlier would be silently reused. The folder name
# carries a hash of the flags, so a change of flags forces a fresh build.
set -euo pipefail
PIP=${1:?usage: build-llama.sh PATH/TO/pip}
VERSION=0.3.36
FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF"
KEY=$(printf '%s %s' "$VERSION" "$FLAGS" | sha256sum | cut -c1-12)
DIR=${RECWORLD_WHEELS:-.wheels}/llama-$KEY
if ! compgen -G "$DIR/llama_cpp_python-$VERSION-*.whl" >/dev/null; then
  echo "building llama-cpp-python $VERSION portably (one time, about 5-10 minutes on 2 cores)"
  mkdir -p "$DIR.partial"
  CMAKE_ARGS="$FLAGS" "$PIP" wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
    -w "$DIR.partial" "llama-cpp-python==$VERSION"
  rm -rf "$DIR" && mv "$DIR.partial" "$DIR"
fi
"$PIP" install --quiet "$DIR"/llama_cpp_python-$VERSION-*.whl
