"""Targeting: a model, a product and a predictive segment rule, previewed and turned into users."""
