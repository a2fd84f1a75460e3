# One image holding both programs: `scheduler-operator` (the operator) and `scheduler-runtime`
# (the scheduler it deploys). Its name and tag are set in operator/scheduler_operator/version.py;
# docs/development.md, "The container image", shows how to build and push it under that name.

# The published base is pinned to an exact patch release of Python and Debian. Any Debian-like
# base with python3 and its venv module works: tools/images.sh passes a base built locally from
# Debian packages where no registry can be reached.
ARG BASE=python:3.11.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# Every dependency, and the build backend, comes from the lock files with its hashes, so two
# builds of one commit install the same bytes.
COPY requirements/runtime.lock requirements/build.lock /src/requirements/
RUN python3 -m venv /opt/build \
 && /opt/build/bin/pip install --require-hashes --no-deps -r /src/requirements/build.lock \
 && python3 -m venv /opt/scheduler-operator \
 && /opt/scheduler-operator/bin/pip install --require-hashes --no-deps -r /src/requirements/runtime.lock
COPY pyproject.toml README.md /src/
COPY operator /src/operator
COPY scheduler_runtime /src/scheduler_runtime
COPY scheduler_plugins /src/scheduler_plugins
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /wheels /src \
 && /opt/scheduler-operator/bin/pip install --no-deps /wheels/*.whl \
 && /opt/scheduler-operator/bin/pip check \
 && /opt/scheduler-operator/bin/pip uninstall --yes pip

FROM ${BASE}
# The final stage installs nothing: no pip, no compilers, only the finished environment.
RUN if python3 -m pip --version >/dev/null 2>&1; then python3 -m pip uninstall --yes pip setuptools wheel; fi
# The user the pods run as (65532, as in distroless images) gets a name, for libraries that ask.
RUN echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >>/etc/passwd \
 && echo 'nonroot:x:65532:' >>/etc/group
COPY --from=build /opt/scheduler-operator /opt/scheduler-operator
ENV PATH=/opt/scheduler-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
CMD ["scheduler-operator", "run"]
