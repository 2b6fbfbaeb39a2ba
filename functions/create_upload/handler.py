"""POST /platform-ads/uploads: a link to upload a large audience list as CSV (dashboard, JWT)."""

from shared import wiring
from shared.api import USER_AUTH, create_app, http_entry_point
from shared.audiences.uploads import UploadLink, create_upload_link
from shared.middleware import require_user, user_principal
from shared.observability import tracer

app = create_app()


@app.post(
    "/platform-ads/uploads",
    middlewares=[require_user],
    security=USER_AUTH,
    tags=["Audiences"],
    status_code=201,
)
@tracer.capture_method
def create_upload() -> UploadLink:
    """A 15-minute presigned POST for a CSV with columns user_id, email, firstName, lastName, phone,
    score, country: send the fields, then the file, as one multipart/form-data request. Pass the
    uploadId instead of users to create or activate an audience."""
    return create_upload_link(
        user_principal(app).org_id, wiring.data_blobs(), wiring.settings().audience_upload_max_bytes
    )


lambda_handler = http_entry_point(app)
