"""How the OpenAPI schema (/api/schema/) describes wanmon's own authentication classes."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class OptionalBasicAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "wanmon.core.auth.OptionalBasicAuthentication"
    name = "basicAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "basic",
            "description": "only when the server sets WANMON_API_BASIC_AUTH; use a token otherwise",
        }


class AgentTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "wanmon.measurements.api.auth.AgentTokenAuthentication"
    name = "agentToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "description": "a site agent's token (manage.py agent_create)"}


class ApiTokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "wanmon.core.auth.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "a personal token, 'Token <key>' (manage.py drf_create_token USER); it expires",
        }

