"""Logger, Tracer and Metrics shared by every function (Powertools)."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics, Tracer

# Service name and namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE,
# set in template.yaml Globals. Tracer is disabled outside Lambda (POWERTOOLS_TRACE_DISABLED locally).
logger = Logger()
tracer = Tracer()
metrics = Metrics()
