# pypto "hw" toolchain image: the sim image plus CANN (ccec, runtime) and upstream simpler, for a2a3/a5.
# Built by `python -m pypto.toolchain.images build --flavor hw --installers DIR`, which checks every
# installer against the toolchain manifest's sha256 before the build starts; the SHA256SUMS file it
# writes is checked again here. BASE_IMAGE is the matching sim image. Nothing is downloaded.
ARG BASE_IMAGE
FROM ${BASE_IMAGE} AS install
# Tagged <image>-install:<hash> after a build (layer cache, never a dangling image): see image_prune.py.
LABEL io.pypto.image.stage=install
ARG CANN_VERSION
ARG CANN_TOOLKIT
ARG SIMPLER_COMMIT
USER root
COPY installers/ /tmp/installers/
RUN set -eu; cd /tmp/installers \
 && sha256sum --strict -c SHA256SUMS \
 && test -n "${CANN_TOOLKIT}" && test -n "${SIMPLER_COMMIT}" \
 && for run in ${CANN_TOOLKIT} $(ls *.run | grep -vx "${CANN_TOOLKIT}" || true); do \
      sh "./${run}" --quiet --install --install-path=/usr/local/Ascend || { echo "installing ${run} failed" >&2; exit 1; }; \
    done \
 && mkdir -p /opt/simpler && tar -xzf simpler.tar.gz -C /opt/simpler \
 && echo "${SIMPLER_COMMIT}" > /opt/simpler/COMMIT \
 && echo "${CANN_VERSION}" > /usr/local/Ascend/PYPTO_CANN_VERSION

FROM ${BASE_IMAGE}
COPY --from=install /usr/local/Ascend /usr/local/Ascend
COPY --from=install /opt/simpler /opt/simpler
COPY image.json /opt/pypto/image.json
ENV ASCEND_HOME_PATH=/usr/local/Ascend/ascend-toolkit/latest \
    PYPTO_SIMPLER_ROOT=/opt/simpler
RUN pypto doctor
ENTRYPOINT ["pypto"]
CMD ["--help"]
