#!/usr/bin/env bash

# SPDX-FileCopyrightText: 2026 Catch Developers
# SPDX-License-Identifier: BSD-3-Clause

# Build the Catch images with docker or podman; the one command CI, the release and a developer use.
#
#   docker/build_images.sh [--stage-only] [--push] [dev] [release]     (default: dev release)
#
#   dev      docker/Dockerfile.dev -> $CATCH_REGISTRY/catch-dev:<torch>-catch<N>  (e.g. ghcr.io/catch-mlu/catch-dev:2.13.0-catch1)
#   release  docker/Dockerfile     -> $CATCH_REGISTRY/catch:<torch>-catch<N>      (needs dist/torch-*catch*.whl: built
#            with scripts/build_wheel.py when dist/ has none)
#   --stage-only  only stage the build context (the pinned CPU torch wheel into docker/context/wheels) and stop
#   --push        push the tags after building (release pipeline; log in to the registry first). Prints
#                 "pushed <name> <digest>" (the manifest digest the registry stored) per image
#
# Environment:
#   CATCH_REGISTRY       image name prefix (default ghcr.io/catch-mlu)
#   CATCH_BASE           base image (default: the Dockerfiles' python:3.11-slim-bookworm); docker/make_base.sh makes
#                        localhost/catch-base:bookworm where no registry can be reached
#   CATCH_ENGINE         docker or podman (default: docker if its daemon answers, else podman)
#   CATCH_PODMAN         podman with global options (default: podman --storage-driver=vfs --cgroup-manager=cgroupfs,
#                        which works inside an unprivileged container without a daemon)
#   CATCH_BUILD_FLAGS    extra build flags (default for podman: --isolation=chroot --layers=false: no daemon needed,
#                        and one layer per stage instead of one per instruction, which vfs storage copies in full)
#   CATCH_IMAGE_LOGS     directory for the build logs (default docker/context/logs)
#   CATCH_REUSE_IMAGES   1: reuse an image of the store built from the same inputs instead of building again (every
#                        build is labelled org.catch-mlu.inputs=<sha256 of its inputs: the sources, the staged or
#                        combined wheel, the base>); used by the release rehearsal (tox -e release) after tox -e images
#   CONTAINERS_REGISTRIES_CONF  (podman) registries.conf, e.g. one marking a loopback test registry insecure (HTTP)
#
# Each build ends with the smoke step (docker/smoke.py: a training step on mlu); it is re-run on every build
# (SMOKE_RUN build argument) even when the other layers come from the cache. A build whose log lacks the
# "catch-smoke: ok" line fails. Prints "image <name> built in <s> s" per image. Exit status: 0 ok, 1 build failed,
# 2 bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
py=${PYTHON:-python3}
# The tooling (catch_tools) of this checkout, also under a python3 without it installed.
tools() { PYTHONPATH=$root/src${PYTHONPATH:+:$PYTHONPATH} "$py" "$@"; }
registry=${CATCH_REGISTRY:-ghcr.io/catch-mlu}
logs=${CATCH_IMAGE_LOGS:-$root/docker/context/logs}
stage_only=0 push=0 targets=()
for arg in "$@"; do
    case $arg in
        --stage-only) stage_only=1 ;;
        --push) push=1 ;;
        dev|release) targets+=("$arg") ;;
        -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "error: build_images.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(dev release)

# docker only when its daemon answers (a docker CLI without a daemon, or podman-docker, is common in containers).
if [ -n "${CATCH_ENGINE:-}" ]; then engine=$CATCH_ENGINE
elif docker info > /dev/null 2>&1; then engine=docker
else engine=podman
fi
case $engine in
    docker) cli=(docker); read -r -a flags <<< "${CATCH_BUILD_FLAGS:-}" ;;
    podman) read -r -a cli <<< "${CATCH_PODMAN:-podman --storage-driver=vfs --cgroup-manager=cgroupfs}"
            read -r -a flags <<< "${CATCH_BUILD_FLAGS:---isolation=chroot --layers=false}" ;;
    *) echo "error: build_images.sh: CATCH_ENGINE must be docker or podman, not '$engine'" >&2; exit 2 ;;
esac
version=$(tools -c \
    'from catch_tools.pin import load_pin; p = load_pin(); print(f"{p.public_version}-catch{p.series_version}")')

stage_dev_context() {
    # The pinned CPU torch wheel (scripts/upstream.py: cached download) next to the Dockerfile's context.
    local wheel
    wheel=$(tools scripts/upstream.py wheel)
    mkdir -p docker/context/wheels
    find docker/context/wheels -name 'torch-*.whl' ! -name "$(basename "$wheel")" -delete
    [ -f "docker/context/wheels/$(basename "$wheel")" ] || ln -f "$wheel" docker/context/wheels/ 2> /dev/null \
        || cp "$wheel" docker/context/wheels/
    echo "staged $(basename "$wheel") in docker/context/wheels"
}

ensure_combined_wheel() {
    compgen -G 'dist/torch-*catch*.whl' > /dev/null && return 0
    echo "dist/ has no combined wheel: building it (scripts/build_wheel.py)"
    tools scripts/build_wheel.py --out dist
}

inputs_key() {  # inputs_key NAME: sha256 of everything the image NAME is built from
    {
        echo "base=${CATCH_BASE:-}"
        if [ "$1" = catch ]; then  # the release image's context: Dockerfile.dockerignore lets in only these
            sha256sum docker/Dockerfile docker/Dockerfile.dockerignore constraints.txt docker/install_release.sh \
                docker/smoke.py dist/torch-*catch*.whl
        else  # the dev image's context: the project (committed tree, local changes, new files) + the staged wheel
            git rev-parse 'HEAD^{tree}'
            git diff HEAD --binary
            git ls-files -z -o --exclude-standard -- . ':!docker/context' | xargs -0 -r sha256sum
            ls docker/context/wheels
        fi
    } | sha256sum | cut -d' ' -f1
}

push() {  # push IMAGE NAME: push, then print the manifest digest the registry stored
    local digest
    mkdir -p "$logs"
    if [ "$engine" = podman ]; then
        "${cli[@]}" push --digestfile "$logs/$2.digest" "$1"
        digest=$(cat "$logs/$2.digest")
    else
        "${cli[@]}" push "$1"
        digest=$(docker image inspect --format '{{range .RepoDigests}}{{println .}}{{end}}' "$1" \
                 | grep -F "${1%:*}@" | head -n 1 | cut -d@ -f2)
    fi
    echo "pushed $1 $digest"
}

build() {  # build NAME DOCKERFILE
    local file=$2 image="$registry/$1:$version" log="$logs/$1.log" start rc=0 old_id key reuse
    key=$(inputs_key "$1")
    if [ "${CATCH_REUSE_IMAGES:-0}" = 1 ]; then
        reuse=$("${cli[@]}" images -q --filter "label=org.catch-mlu.inputs=$key" | head -n 1)
        if [ -n "$reuse" ]; then
            "${cli[@]}" tag "$reuse" "$image"
            echo "image $image reused: $reuse has the same inputs ($key)"
            [ $push -eq 0 ] || push "$image" "$1"
            return 0
        fi
        echo "no image with the inputs of $image ($key) in the store: building it"
    fi
    local args=(build -f "$file" -t "$image" --label "org.catch-mlu.inputs=$key" --build-arg "SMOKE_RUN=$(date +%s%N)")
    [ -z "${CATCH_BASE:-}" ] || args+=(--build-arg "BASE=$CATCH_BASE")
    [ "$engine" = docker ] || args+=(--ignorefile "$file.dockerignore")
    mkdir -p "$logs"
    old_id=$("${cli[@]}" image inspect --format '{{.Id}}' "$image" 2> /dev/null || true)
    echo "building $image from $file with $engine (log: $log)"
    start=$(date +%s)
    "${cli[@]}" "${args[@]}" "${flags[@]}" . > "$log" 2>&1 || rc=$?
    if [ $rc -ne 0 ]; then
        tail -n 30 "$log" >&2
        if grep -qi 'no space left on device' "$log"; then
            # vfs storage: the build container, the committed layer and its blob in TMPDIR are each a full copy.
            echo "error: $file: image build ran out of disk space (the dev image needs about 9 GB free while it" \
                 "is committed); free now: $(df -h --output=avail,target / "${TMPDIR:-/var/tmp}" | tail -n +2 \
                 | tr -s ' ' | paste -sd ';')" >&2
        fi
        echo "error: $file: image build failed (exit $rc); full log: $log" >&2
        exit 1
    fi
    if ! grep -q '^catch-smoke: ok' "$log"; then
        echo "error: $file: the smoke step did not report 'catch-smoke: ok'; log: $log" >&2
        exit 1
    fi
    grep '^catch-smoke: ok' "$log"
    # The previous image of this tag is now untagged: remove it (vfs keeps a full copy per image), unless in use.
    if [ -n "$old_id" ] && [ "$old_id" != "$("${cli[@]}" image inspect --format '{{.Id}}' "$image")" ]; then
        "${cli[@]}" rmi "$old_id" > /dev/null 2>&1 || true
    fi
    echo "image $image built in $(( $(date +%s) - start )) s"
    [ $push -eq 0 ] || push "$image" "$1"
}

for target in "${targets[@]}"; do
    case $target in
        dev) stage_dev_context
             [ $stage_only -eq 1 ] || build catch-dev docker/Dockerfile.dev ;;
        release) [ $stage_only -eq 1 ] || { ensure_combined_wheel; build catch docker/Dockerfile; } ;;
    esac
done
