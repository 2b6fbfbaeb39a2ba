"""One cold prediction in a fresh process, for ``benchmarks.predict`` (not a benchmark module itself).

``python benchmarks/_cold_predict.py service|naive|floor SPAWNED_AT`` reads its job from the environment
(``BENCH_*``), performs imports -> S3 get -> model load -> first prediction, and prints one JSON line
with the seconds each phase took. ``SPAWNED_AT`` is the parent's ``time.perf_counter()`` just before
spawning (CLOCK_MONOTONIC is system-wide on Linux), so ``startup`` is interpreter start-up.

* ``service`` / ``service_1m``: what ``functions/predict/handler.py`` does at module level (it is
  imported, so the resolver and the route are built), then the service's own S3 blob store (settings,
  botocore client) reading the user's shard of the serving layout, ``load_bundle`` with its checksum
  and ``predict_purchase`` (``BENCH_BUNDLE_KEY`` names the shard of the 2k- or the 1M-user model).
* ``naive``: boto3, joblib, scikit-learn and the same Powertools imports and objects, then a plain
  boto3 S3 get of the pipeline, ``joblib.load`` and ``predict_proba`` on the same feature row.
* ``floor``: what neither path can avoid with these dependencies: the same Powertools imports and
  objects, boto3 and numpy, a plain boto3 S3 get of the bundle and ``np.load`` of its arrays. Not a
  prediction; it shows how close to the floor the service is, and the largest ratio reachable.
"""

import time

STARTED = time.perf_counter()

import json  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from itertools import pairwise  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# Both paths need the repository: the pickled pipeline refers to shared.ml.features.log1p_columns.
sys.path.insert(0, str(ROOT))


def _service() -> dict[str, float]:
    import importlib.util

    marks = [time.perf_counter()]
    spec = importlib.util.spec_from_file_location("handler", ROOT / "functions/predict/handler.py")
    assert spec is not None
    assert spec.loader is not None
    handler = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(handler)
    from shared import wiring
    from shared.ml.scoring import load_bundle

    marks.append(time.perf_counter())
    data = wiring.artifact_blobs().get(os.environ["BENCH_BUNDLE_KEY"])
    marks.append(time.perf_counter())
    bundle = load_bundle(data, os.environ["BENCH_BUNDLE_SHA256"])
    marks.append(time.perf_counter())
    prediction = bundle.predict_purchase(os.environ["BENCH_USER"], os.environ["BENCH_PRODUCT"])
    marks.append(time.perf_counter())
    return _phases(marks, prediction.score)


def _naive() -> dict[str, float]:
    marks = [time.perf_counter()]
    import io

    import boto3
    import joblib
    import numpy as np
    import sklearn.linear_model
    import sklearn.pipeline
    import sklearn.preprocessing  # noqa: F401

    _powertools()
    marks.append(time.perf_counter())
    body = _s3_get(boto3, os.environ["BENCH_PIPELINE_KEY"])
    marks.append(time.perf_counter())
    pipeline = joblib.load(io.BytesIO(body))
    marks.append(time.perf_counter())
    row = np.array([json.loads(os.environ["BENCH_ROW"])])
    score = float(pipeline.predict_proba(row)[0, 1])
    marks.append(time.perf_counter())
    return _phases(marks, score)


def _floor() -> dict[str, float]:
    marks = [time.perf_counter()]
    import io

    import boto3
    import numpy as np

    _powertools()
    marks.append(time.perf_counter())
    body = _s3_get(boto3, os.environ["BENCH_WHOLE_BUNDLE_KEY"])
    marks.append(time.perf_counter())
    with np.load(io.BytesIO(body), allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    marks.append(time.perf_counter())
    marks.append(time.perf_counter())
    return _phases(marks, float(len(arrays)))


def _powertools() -> None:
    """The Powertools imports and objects every function has (handler module and observability)."""
    from aws_lambda_powertools import Logger, Metrics, Tracer
    from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response, content_types  # noqa: F401
    from aws_lambda_powertools.event_handler.openapi.params import Path as PathParam  # noqa: F401
    from aws_lambda_powertools.logging import correlation_paths  # noqa: F401
    from aws_lambda_powertools.metrics import MetricUnit  # noqa: F401
    from aws_lambda_powertools.utilities.typing import LambdaContext  # noqa: F401

    Logger(), Tracer(), Metrics()


def _s3_get(boto3: Any, key: str) -> bytes:
    s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"], region_name=os.environ["AWS_REGION"])
    body: bytes = s3.get_object(Bucket=os.environ["ARTIFACTS_BUCKET"], Key=key)["Body"].read()
    return body


def _phases(marks: list[float], score: float) -> dict[str, float]:
    names = ("imports", "fetch", "load", "predict")
    steps = zip(names, pairwise(marks), strict=True)
    return {name: end - start for name, (start, end) in steps} | {"score": score}


if __name__ == "__main__":
    mode, spawned_at = sys.argv[1], float(sys.argv[2])
    phases = {"service": _service, "service_1m": _service, "naive": _naive, "floor": _floor}[mode]()
    print(json.dumps({"startup": STARTED - spawned_at, "total": time.perf_counter() - spawned_at, **phases}))
