# pypto "sim" toolchain image: Debian + python + g++ + pypto + pinned ptoas (with its shim), CPU simulator.
# Built by `python -m pypto.toolchain.images build --flavor sim`, which assembles the context
# (hash-verified wheelhouse, image.lock, toolchain.toml, smoke inputs) and passes every pinned
# value as a build argument from the toolchain manifest. Nothing version-specific is written here.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS os
ARG PYTHON_VERSION
ARG GXX_MIN
ENV DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8
# Debian packages: versions recorded in /opt/pypto/packages.txt (this layer is cached per base image).
# SOURCE_DATE_EPOCH makes the postinst byte-compilation write checked-hash .pyc files, which carry
# no timestamp (so its value does not matter and does not invalidate this layer).
RUN test -n "${PYTHON_VERSION}" && test -n "${GXX_MIN}" \
 && apt-get update -qq \
 && SOURCE_DATE_EPOCH=0 apt-get install -y -qq -o Dpkg::Use-Pty=0 --no-install-recommends "python${PYTHON_VERSION}" "python${PYTHON_VERSION}-venv" g++ libc6-dev \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/log/* /var/cache/ldconfig/aux-cache \
 && gxx_major="$(g++ -dumpversion | cut -d. -f1)" \
 && { [ "${gxx_major}" -ge "${GXX_MIN}" ] || { echo "g++ ${gxx_major} < required ${GXX_MIN}" >&2; exit 1; }; } \
 && mkdir -p /opt/pypto \
 && dpkg-query -W -f='${Package}=${Version}\n' | LC_ALL=C sort > /opt/pypto/packages.txt

FROM os AS build
ARG PYTHON_VERSION
ARG PTOAS_VERSION
# Deterministic .pyc (checked-hash) and timestamps for everything pip writes.
ARG SOURCE_DATE_EPOCH=0
ENV SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH}
COPY wheelhouse/ /wheelhouse/
COPY image.lock /wheelhouse/image.lock
RUN "python${PYTHON_VERSION}" -m venv /opt/pypto/venv \
 && /opt/pypto/venv/bin/pip install -q --no-index --no-cache-dir --disable-pip-version-check \
      --find-links /wheelhouse --require-hashes --no-deps -r /wheelhouse/image.lock \
 && /opt/pypto/venv/bin/pip check \
 && /opt/pypto/venv/bin/python -c "import importlib.metadata as m, sys; v = m.version('ptoas'); \
sys.exit(0 if v == '${PTOAS_VERSION}' else f'ptoas {v} installed, the manifest pins ${PTOAS_VERSION}')" \
 && /opt/pypto/venv/bin/pip freeze --all | LC_ALL=C sort > /opt/pypto/python-packages.txt
COPY toolchain.toml /opt/pypto/toolchain.toml
# Build the ptoas library shim once, into a cache dir every uid can read.
RUN /opt/pypto/venv/bin/python -c "from pathlib import Path; from pypto.toolchain.ptoas import find_ptoas; \
print(find_ptoas(cache_dir=Path('/opt/pypto/cache')))" \
 && chmod -R a+rX,go-w /opt/pypto

FROM os
ARG TOOLCHAIN_VERSION
COPY --from=build /opt/pypto /opt/pypto
ENV PATH=/opt/pypto/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYPTO_CACHE_DIR=/opt/pypto/cache \
    PYPTO_TOOLCHAIN=${TOOLCHAIN_VERSION} \
    PYTHONDONTWRITEBYTECODE=1
COPY smoke/ /opt/pypto/smoke/
# Only what the smoke test adds (the prebuilt runtime, written 0600 by mkstemp) is made world-readable:
# a chmod over all of /opt/pypto would copy every file into this layer again.
RUN sh /opt/pypto/smoke/smoke.sh && chmod -R a+rX,go-w /opt/pypto/cache/sim
WORKDIR /src
ENTRYPOINT ["pypto"]
CMD ["--help"]
