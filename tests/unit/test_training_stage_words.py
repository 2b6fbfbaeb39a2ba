"""The dashboard says a training's stage in words (``stageWords`` in ``dashboard/app.js``), from the
stage ids the training job records as it goes. A stage the map does not know would show as its id
("Training · refit"): every stage a real training of each kind records has its words."""

from __future__ import annotations

import re

import pytest

from local.dashboard import DASHBOARD_DIR
from shared.predictions.training_job import run_training
from tests.unit.ml.test_serving_gate import Blobs, Models
from tests.unit.ml.test_training_publishes import Progress, job, shop_files


def stages_with_words() -> set[str]:
    """The keys of the ``STAGES`` map in ``dashboard/app.js``."""
    source = (DASHBOARD_DIR / "app.js").read_text()
    found = re.search(r"const STAGES = \{(.*?)\n\};", source, re.DOTALL)
    assert found, "dashboard/app.js has no STAGES map"
    return {key or quoted for quoted, key in re.findall(r'^\s*(?:"([^"]+)"|(\w+)):', found.group(1), re.M)}


@pytest.mark.parametrize(
    ("model_type", "name"), [("purchase", "shop-purchase"), ("recommendation", "shop-rec")]
)
def test_every_stage_a_training_records_has_words_on_the_dashboard(model_type: str, name: str) -> None:
    # Given a training of this kind, its progress recorded as the training job records it
    progress = Progress()
    run_training(
        job(model_type, name), data=shop_files(), artifacts=Blobs(), models=Models(), progress=progress
    )

    # When the stages it went through are read
    stages = {t.stage for t in progress.trainings if t.state == "running" and t.stage}

    # Then the dashboard has words for each
    assert stages, "the training recorded no stage"
    assert stages <= stages_with_words(), stages - stages_with_words()
