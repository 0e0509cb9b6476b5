"""What every layer may use: the one error base (ElopipeError), child processes that end with
their parent (lifeline), Ctrl-C handling (interrupt) and Prefect's environment (prefect_env)."""
