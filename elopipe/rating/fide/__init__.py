"""The FIDE family (FIDE B.02 Rating Regulations, FIDE B.01 Title Regulations): the rules
(`rules`), the vectorised engine (`params`, `prepare`, `period`, `initial`, `ro`, `engine`), its
driver over the store (`run`), one-player calculations (`calc`), the pure-Python reference
(`reference`) and the title norms (`norms`, `norm_search`, `norms_sets`, `norm_clauses`, `norms_store`)."""
