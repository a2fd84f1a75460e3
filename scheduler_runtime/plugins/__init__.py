"""In-tree plugins, one package per upstream plugin folder."""
