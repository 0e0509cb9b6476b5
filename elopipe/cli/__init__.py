"""The `elopipe` command line: the Typer app (app), its entry point (main), one module per command."""
