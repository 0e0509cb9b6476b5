"""CLI commands, one module per command group; `elopipe.cli.main` imports them all."""
