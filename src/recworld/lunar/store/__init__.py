"""A LUNAR run folder: what the stages write (:mod:`.outputs`) and the data read back (:mod:`.dataset`)."""
