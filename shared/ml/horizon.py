"""The prediction horizon's limits, apart from training so that request models (the data source sync)
can validate a horizon without importing scikit-learn."""

DEFAULT_HORIZON_DAYS = 30
MIN_HORIZON_DAYS = 7
MAX_HORIZON_DAYS = 180
