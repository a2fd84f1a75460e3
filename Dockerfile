# One image holding both programs: `scheduler-operator` (the operator) and `scheduler-runtime`
# (the scheduler it deploys). Its name and tag are set in operator/scheduler_operator/version.py;
# the README's "Container image" section shows how to build and push it under that name.

# The base is pinned to an exact patch release of Python and Debian.
ARG BASE=python:3.11.11-slim-bookworm

FROM ${BASE} AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/scheduler-operator
COPY pyproject.toml README.md /src/
COPY operator /src/operator
COPY scheduler_runtime /src/scheduler_runtime
COPY scheduler_plugins /src/scheduler_plugins
RUN /opt/scheduler-operator/bin/pip install /src \
 && /opt/scheduler-operator/bin/pip uninstall --yes pip

FROM ${BASE}
# The final stage installs nothing: no pip, no compilers, only the finished environment.
RUN python -m pip uninstall --yes pip setuptools wheel
COPY --from=build /opt/scheduler-operator /opt/scheduler-operator
ENV PATH=/opt/scheduler-operator/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
CMD ["scheduler-operator", "run"]
