"""CLI commands, one module per command group; `elopipe.cli` imports them all."""
