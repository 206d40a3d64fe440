# pypto "sim" / "sim-slim" toolchain images: Debian + python + g++ + pypto + pinned ptoas (with its
# shim), CPU simulator; "sim" adds CPU torch. Built by
# `python -m pypto.toolchain.images build --flavor sim|sim-slim`, which assembles the context
# (hash-verified wheelhouse, image.lock, image.json, toolchain.toml, smoke inputs) and passes every
# pinned value as a build argument from the toolchain manifest. The two flavors differ only in the
# wheels their image.lock lists. Nothing version-specific is written here.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS os
ARG PYTHON_VERSION
ARG GXX_MIN
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
# Every RUN below ends with pypto-clamp-mtimes, so equal contents give equal layer digests.
COPY clamp-mtimes.sh /usr/local/sbin/pypto-clamp-mtimes
# Debian packages: versions recorded in /opt/pypto/packages.txt (this layer is cached per base image).
# SOURCE_DATE_EPOCH makes the postinst byte-compilation write checked-hash .pyc files, which carry
# no timestamp (so its value does not matter and does not invalidate this layer).
RUN start=$(($(date +%s) - 2)) && test -n "${PYTHON_VERSION}" && test -n "${GXX_MIN}" \
 && apt-get update -qq \
 && SOURCE_DATE_EPOCH=0 apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends "python${PYTHON_VERSION}" "python${PYTHON_VERSION}-venv" g++ libc6-dev \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /var/cache/ldconfig/aux-cache \
 && gxx_major="$(g++ -dumpversion | cut -d. -f1)" \
 && { [ "${gxx_major}" -ge "${GXX_MIN}" ] || { echo "g++ ${gxx_major} < required ${GXX_MIN}" >&2; exit 1; }; } \
 && mkdir -p /opt/pypto \
 && dpkg-query -W -f='${Package}=${Version}\n' | LC_ALL=C sort > /opt/pypto/packages.txt \
 && sh /usr/local/sbin/pypto-clamp-mtimes "$start" 0

# Third-party wheels (torch in "sim") and ptoas: a stage of their own, so the venv layer below is
# reused from the layer cache until the lock changes (a pypto change does not reinstall torch), and
# the wheelhouse never reaches the final image. SOURCE_DATE_EPOCH=0 only selects checked-hash .pyc
# files (no timestamps inside), so it is fixed here and does not invalidate the layer.
FROM os AS deps
# Tagged <image>-deps:<hash> after a build (layer cache, never a dangling image): see image_prune.py.
LABEL io.pypto.image.stage=deps
ARG PYTHON_VERSION
COPY wheelhouse/ /wheelhouse/
COPY deps.lock /wheelhouse/deps.lock
RUN start=$(($(date +%s) - 2)) && export SOURCE_DATE_EPOCH=0 \
 && "python${PYTHON_VERSION}" -m venv /opt/pypto/venv \
 && /opt/pypto/venv/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
      --find-links /wheelhouse --require-hashes --no-deps -r /wheelhouse/deps.lock \
 && sh /usr/local/sbin/pypto-clamp-mtimes "$start" 0

FROM os
ARG PTOAS_VERSION
ARG TOOLCHAIN_VERSION
COPY --from=deps /opt/pypto/venv /opt/pypto/venv
# This checkout's pypto wheel (deterministic under SOURCE_DATE_EPOCH), hash-locked like the rest.
ARG SOURCE_DATE_EPOCH=0
COPY project/ /tmp/project/
RUN start=$(($(date +%s) - 2)) && export SOURCE_DATE_EPOCH \
 && /opt/pypto/venv/bin/pip install -q --no-index --no-cache-dir \
      --disable-pip-version-check --find-links /tmp/project --require-hashes --no-deps -r /tmp/project/pypto.lock \
 && rm -rf /tmp/project \
 && /opt/pypto/venv/bin/pip check \
 && /opt/pypto/venv/bin/python -c "import importlib.metadata as m, sys; v = m.version('ptoas'); \
sys.exit(0 if v == '${PTOAS_VERSION}' else f'ptoas {v} installed, the manifest pins ${PTOAS_VERSION}')" \
 && /opt/pypto/venv/bin/pip freeze --all | LC_ALL=C sort > /opt/pypto/python-packages.txt \
 && sh /usr/local/sbin/pypto-clamp-mtimes "$start" "${SOURCE_DATE_EPOCH}"
COPY toolchain.toml image.json image.lock /opt/pypto/
ENV PATH=/opt/pypto/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYPTO_CACHE_DIR=/opt/pypto/cache \
    PYPTO_TOOLCHAIN=${TOOLCHAIN_VERSION} \
    PYTHONDONTWRITEBYTECODE=1
COPY smoke/ /opt/pypto/smoke/
# The smoke test builds the ptoas shim and the sim runtime into /opt/pypto/cache; only that dir is
# made world-readable (files written 0600 by mkstemp): a chmod over all of /opt/pypto would copy
# every file into this layer again. The per-program caches (ptoas output, @pl.jit and run(program)
# compiles) stay off here: they would hold the smoke programs only, and the pinned ptoas's output is not
# the same from run to run, so they would make two builds of one image differ.
RUN start=$(($(date +%s) - 2)) && PYPTO_CACHE_MAX_MB=0 PYPTO_JIT_CACHE=0 sh /opt/pypto/smoke/smoke.sh \
 && chmod -R a+rX,go-w /opt/pypto/cache \
 && sh /usr/local/sbin/pypto-clamp-mtimes "$start" "${SOURCE_DATE_EPOCH}"
WORKDIR /src
ENTRYPOINT ["pypto"]
CMD ["--help"]
