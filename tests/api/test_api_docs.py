"""/api/docs/ is served from the app (drf-spectacular-sidecar), runs under the CSP, and in
production only staff see it or the schema."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.conftest import client_for

pytestmark = pytest.mark.django_db

ASSET = re.compile(r'(?:src|href)="([^"]+)"')


def _docs_page(client: Client) -> str:
    response = client.get("/api/docs/")
    assert response.status_code == 200
    return response.content.decode()


def test_the_docs_page_loads_nothing_from_another_site():
    page = _docs_page(Client())
    assets = ASSET.findall(page)
    assert assets
    for url in assets:
        assert url.startswith("/"), url
        assert not url.startswith("//"), url


def test_every_asset_of_the_docs_page_is_served():
    client = Client()
    for url in ASSET.findall(_docs_page(client)):
        response = client.get(url.replace("&amp;", "&"))
        assert response.status_code == 200, url


def test_the_docs_page_has_no_inline_script_or_style():
    page = _docs_page(Client())
    assert "<style" not in page
    assert " style=" not in page
    scripts = re.findall(r"<script([^>]*)>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 3
    for attributes, body in scripts:
        assert "src=" in attributes
        assert not body.strip()


def test_the_docs_init_script_is_a_script_file_that_points_at_the_schema():
    response = Client().get("/api/docs/?script=")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in response.content.decode()
    assert "/api/schema/" in response.content.decode()
    # No badge from swagger-ui's public validator, which would be sent the schema's URL.
    assert '"validatorUrl": null' in response.content.decode()


def test_in_development_everyone_sees_the_schema_and_the_docs():
    client = Client()
    assert client.get("/api/schema/").status_code == 200
    assert client.get("/api/docs/").status_code == 200


@pytest.mark.parametrize("url", ["/api/schema/", "/api/docs/", "/api/docs/?script="])
def test_in_production_only_staff_see_the_schema_and_the_docs(url, settings, alice, carol):
    settings.PRODUCTION = True
    assert Client().get(url).status_code == 403
    assert client_for(alice).get(url).status_code == 403
    assert client_for(carol).get(url).status_code == 200
