"""The dashboard's users in the Cognito user pool: what account closure does to them.

A user is named by the JWT's ``sub``: the pool signs in by e-mail (``UsernameAttributes: [email]``),
so each user's username is the ``sub`` itself and the admin calls take it as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mypy_boto3_cognito_idp import CognitoIdentityProviderClient


class CognitoUserPool:
    def __init__(self, cognito: CognitoIdentityProviderClient, pool_id: str) -> None:
        self._cognito = cognito
        self._pool_id = pool_id

    def disable(self, user_id: str) -> bool:
        """Stop the user from signing in and revoke their refresh tokens (an ID token already issued
        lives out its hour: the API answers it with "the account was closed"). False when the pool
        has no such user; safe to repeat."""
        try:
            self._cognito.admin_disable_user(UserPoolId=self._pool_id, Username=user_id)
            self._cognito.admin_user_global_sign_out(UserPoolId=self._pool_id, Username=user_id)
        except self._cognito.exceptions.UserNotFoundException:
            return False
        return True

    def delete(self, user_id: str) -> bool:
        """Delete the user from the pool; False when it was already gone (safe to repeat)."""
        try:
            self._cognito.admin_delete_user(UserPoolId=self._pool_id, Username=user_id)
        except self._cognito.exceptions.UserNotFoundException:
            return False
        return True
