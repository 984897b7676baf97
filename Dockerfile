# grove-sharing-webhook: the webhook server and the claim reconciler, one image.
#
#   docker build -t grove-sharing-webhook:0.1.0 .
#
# The builder installs the dependencies from requirements.lock (every version pinned with its
# hashes, all published as wheels for x86_64 and aarch64; `make lock` regenerates it), a layer kept
# while only the package changes, then the package without dependencies, into a virtual environment,
# and compiles their bytecode; the final stage copies only that environment onto a clean Python
# image, so it holds no pip, no build tools and no caches. At run time nothing is written outside
# mounted volumes: the root filesystem may be read-only.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python -m venv /opt/venv
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --no-compile --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY webhook ./webhook
# kubernetes/aio is the client's asyncio twin (about half of the package), which nothing here imports.
RUN /opt/venv/bin/pip install --no-compile --no-deps . \
 && /opt/venv/bin/pip uninstall --yes pip setuptools \
 && rm -rf /opt/venv/lib/python*/site-packages/kubernetes/aio \
 && python -m compileall -q -j 0 --invalidation-mode unchecked-hash /opt/venv

FROM ${PYTHON_IMAGE}
# The interpreter's own pip is not needed to run, and its standard library gets the bytecode the
# base image leaves out, so a read-only root filesystem costs no start-up time.
RUN python -m pip uninstall --yes pip setuptools wheel \
 && python -m compileall -q -j 0 --invalidation-mode unchecked-hash "$(python -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')"
COPY --from=builder /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
EXPOSE 8443
ENTRYPOINT ["python", "-m", "webhook"]
CMD ["serve"]
