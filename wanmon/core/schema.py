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


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def contact_fields_optional(result: dict, generator, request, public) -> dict:
    """Postprocessing hook: the contact fields a ``ContactFieldsMixin`` serializer leaves out for viewers are not
    required in its component, and say so (the schema holds for every caller)."""
    from wanmon.core.api import ContactFieldsMixin

    optional = {cls.__name__.removesuffix("Serializer"): set(getattr(cls.Meta, "contact_fields", ()))
                for cls in _subclasses(ContactFieldsMixin)}
    for name, component in result.get("components", {}).get("schemas", {}).items():
        fields = optional.get(name)
        if not fields:
            continue
        if "required" in component:
            component["required"] = [f for f in component["required"] if f not in fields]
            if not component["required"]:
                del component["required"]
        for field in fields & set(component.get("properties", {})):
            prop = component["properties"][field]
            prop["description"] = (prop.get("description", "") + " Contact data: operators only, left out for "
                                   "other callers (docs/permissions.md).").strip()
    return result
