"""The dashboard's Content-Security-Policy: the same directives locally and behind CloudFront, and
pages that need nothing it refuses (no inline script, inline handler or style attribute)."""

from __future__ import annotations

import re

from local.dashboard import DASHBOARD_DIR, content_security_policy
from local.template import load_template

TEMPLATE = load_template()


def directives(policy: str) -> dict[str, list[str]]:
    parsed = {}
    for part in policy.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


def deployed_policy() -> dict[str, list[str]]:
    config = TEMPLATE["Resources"]["DashboardResponseHeaders"]["Properties"]["ResponseHeadersPolicyConfig"]
    policy = config["SecurityHeadersConfig"]["ContentSecurityPolicy"]
    assert policy["Override"] is True
    return directives(policy["ContentSecurityPolicy"]["Fn::Sub"])


def test_cloudfront_sends_the_local_servers_directives() -> None:
    # Given
    local = directives(content_security_policy(["http://127.0.0.1:1"]))
    # When
    deployed = deployed_policy()
    # Then: everything but the origins of connect-src is the same
    assert {k: v for k, v in deployed.items() if k != "connect-src"} == {
        k: v for k, v in local.items() if k != "connect-src"
    }
    assert deployed["script-src"] == ["'self'"]
    assert deployed["frame-ancestors"] == ["'none'"]


def test_the_deployed_pages_may_call_only_the_regions_api_user_pool_and_upload_hosts() -> None:
    assert deployed_policy()["connect-src"] == [
        "'self'",
        "https://*.execute-api.${AWS::Region}.${AWS::URLSuffix}",
        "https://cognito-idp.${AWS::Region}.${AWS::URLSuffix}",
        "https://*.s3.${AWS::Region}.${AWS::URLSuffix}",
        "https://*.s3.${AWS::URLSuffix}",
    ]


def test_the_distribution_sends_the_dashboards_policy() -> None:
    behaviour = TEMPLATE["Resources"]["DashboardDistribution"]["Properties"]["DistributionConfig"][
        "DefaultCacheBehavior"
    ]
    assert behaviour["ResponseHeadersPolicyId"] == {"Ref": "DashboardResponseHeaders"}


def test_no_page_has_an_inline_script_handler_or_style() -> None:
    for page in sorted(DASHBOARD_DIR.glob("*.html")):
        html = page.read_text()
        for script in re.findall(r"<script\b[^>]*>", html):
            assert " src=" in script, f"{page.name}: inline script {script}"
        assert not re.search(r"\son[a-z]+\s*=", html), f"{page.name}: inline event handler"
        assert not re.search(r"\sstyle\s*=", html), f"{page.name}: style attribute"
        assert "<style" not in html, f"{page.name}: style element"


def test_no_script_writes_a_style_attribute_or_evaluates_text() -> None:
    for script in sorted(DASHBOARD_DIR.glob("*.js")):
        code = script.read_text()
        assert not re.search(r"setAttribute\(\s*[\"']style", code), script.name
        assert not re.search(r"\beval\(|new Function\(", code), script.name
