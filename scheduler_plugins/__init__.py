"""Out-of-tree scheduling plugins shipped with the project, registered like any third-party
plugin: through the `scheduler_runtime.plugins` entry-point group (see pyproject.toml)."""
