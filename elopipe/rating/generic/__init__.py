"""The generic systems: Elo with a K schedule (`elo`), Glicko-2 (`glicko`) and their driver over
the store (`run`)."""
