"""What every layer may use: the one error base (ElopipeError), child processes that end with
their parent (lifeline), Ctrl-C handling (interrupt) and the settings read from the environment
(settings). Nothing here knows Prefect: its adapter is flows.prefect_env, beside the flows and the CLI."""
