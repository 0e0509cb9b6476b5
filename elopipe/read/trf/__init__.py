"""FIDE TRF (TRF16, TRF-26 and the XX extensions): the reader, its round records, codes and
time controls."""
