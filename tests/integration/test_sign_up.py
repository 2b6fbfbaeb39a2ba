"""Sign-up is closed: only administrators create dashboard users.

moto records the pool's ``AdminCreateUserConfig`` but does not refuse ``SignUp`` for it (Cognito
answers ``NotAuthorizedException``), so the behaviour is checked as far as moto goes: the pool the
local stack provisions from the template has self sign-up switched off.
"""

from __future__ import annotations

from local.stack import LocalStack


def test_the_provisioned_user_pool_lets_only_administrators_create_users(stack: LocalStack) -> None:
    # Given the local stack's user pool, created from the template
    pool_id = stack.physical["UserPool"].ref

    # When
    pool = stack.client("cognito-idp").describe_user_pool(UserPoolId=pool_id)["UserPool"]

    # Then
    assert pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"] is True
