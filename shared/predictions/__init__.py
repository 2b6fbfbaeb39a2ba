"""The prediction surface: model registry, scoring requests, usage metering."""
