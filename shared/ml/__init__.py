"""Machine learning: data ingestion, synthetic data, training (scikit-learn) and numpy-only scoring."""
