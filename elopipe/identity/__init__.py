"""Who is who and what is what: players resolved across files (resolve), one event split across
files joined (events), the same game seen in two sources linked (dedup)."""
