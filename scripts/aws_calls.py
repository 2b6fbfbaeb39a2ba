"""The AWS calls each function's code can make, read from the code without running it: the static
map ``tests/unit/test_least_privilege.py`` holds the template's grants to.

Three steps, each over the AST of ``shared/`` and ``functions/*/handler.py``:

1. **Repository calls.** ``shared/repositories/`` is the only code that touches boto3
   (``CONTRIBUTING.md``). For every method of its classes, the boto3 operations it calls on the
   clients and tables it was built with (``self._table.put_item``, ``self._s3.get_object``,
   ``query_all(self._table, IndexName=...)``, ``batch_writer``, each item of a
   ``transact_write_items``, a presigned URL or form, which S3 authorizes as its signer), as IAM
   actions on the constructor parameter that names the resource.
2. **What a function builds.** The handler's code is walked to a fixed point (rapid type analysis):
   a function or class is reached when reachable code calls or names it, a method when its class is
   built by reachable code and reachable code calls or names an attribute of that name. Every
   repository built by reached code (the factories of ``shared/wiring.py``) is bound to the
   resources its arguments name (``settings().main_table`` is the template's ``MAIN_TABLE``:
   ``MainTable``).
3. **Grants.** The repository methods reached, on the resources their instances were built with,
   give the (action, resource) pairs the function may call, each with the code that calls it;
   S3 and Secrets Manager add what they do with the caller's permissions (``kms:Decrypt`` to read an
   SSE-KMS object or a secret encrypted with the data key, ``kms:GenerateDataKey`` to write one).

The analysis over-approximates a method call by its name (``x.delete()`` reaches every built class's
``delete``), except on receivers that are a dict, a constant, a ContextVar or the resolver's route decorators
(``NOT_REPOSITORY_CALLS``, ``MAPPING_METHODS``, ``ROUTE_DECORATORS``). It cannot see which S3 keys a
call uses: the key prefixes in the template narrow the grants it derives, and the local stack's
enforcement refuses any other key.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPOSITORIES = "shared.repositories"

# boto3's client and resource types, as the repositories annotate their constructor parameters.
CLIENT_TYPES = {
    "Table": "dynamodb-table",
    "DynamoDBClient": "dynamodb",
    "S3Client": "s3",
    "KMSClient": "kms",
    "SecretsManagerClient": "secretsmanager",
    "SFNClient": "states",
    "CognitoIdentityProviderClient": "cognito-idp",
}

# The S3 operations the repositories call, as IAM authorizes them (an object's or the bucket's).
S3_ACTIONS = {
    "put_object": ("s3:PutObject", "object"),
    "create_multipart_upload": ("s3:PutObject", "object"),
    "upload_part": ("s3:PutObject", "object"),
    "complete_multipart_upload": ("s3:PutObject", "object"),
    "abort_multipart_upload": ("s3:AbortMultipartUpload", "object"),
    "get_object": ("s3:GetObject", "object"),
    "head_object": ("s3:GetObject", "object"),
    "delete_object": ("s3:DeleteObject", "object"),
    "list_objects_v2": ("s3:ListBucket", "bucket"),
    "list_object_versions": ("s3:ListBucketVersions", "bucket"),
}


@dataclass(frozen=True)
class Call:
    """One IAM action a repository method needs: on the resource its constructor parameter ``slot``
    names (``index``: a DynamoDB index; ``part``: ``object`` for an S3 object, ``bucket``, or
    ``execution`` for a state machine's executions)."""

    action: str
    slot: str
    index: str | None = None
    part: str | None = None


@dataclass
class ClassInfo:
    qualname: str
    node: ast.ClassDef
    module: str
    bases: list[str] = field(default_factory=list)
    methods: dict[str, ast.FunctionDef] = field(default_factory=dict)


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    names: dict[str, str] = field(default_factory=dict)  # local name -> qualified name


class Index:
    """Every module of ``shared`` and every handler, parsed, with names resolved across imports."""

    def __init__(self, root: Path = ROOT) -> None:
        self.root = root
        self.modules: dict[str, Module] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.function_module: dict[str, str] = {}
        self.classes: dict[str, ClassInfo] = {}
        self._methods: dict[tuple[str, str], str | None] = {}
        paths = sorted((root / "shared").rglob("*.py")) + sorted((root / "functions").glob("*/handler.py"))
        for path in paths:
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            self.modules[name] = Module(name, path, ast.parse(path.read_text(), str(path)))
        for module in self.modules.values():
            self._index(module)

    def _index(self, module: Module) -> None:
        package = module.name if module.path.name == "__init__.py" else module.name.rpartition(".")[0]
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.names[alias.asname] = alias.name
                    else:
                        module.names[alias.name.split(".")[0]] = alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base])
                    base = base.strip(".")
                for alias in node.names:
                    module.names[alias.asname or alias.name] = f"{base}.{alias.name}"
        for node in module.tree.body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = f"{module.name}.{node.name}"
                self.functions[qualname] = node
                self.function_module[qualname] = module.name
                module.names[node.name] = qualname
            elif isinstance(node, ast.ClassDef):
                qualname = f"{module.name}.{node.name}"
                info = ClassInfo(qualname, node, module.name)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        info.methods[item.name] = item  # type: ignore[assignment]
                        self.functions[f"{qualname}.{item.name}"] = item
                        self.function_module[f"{qualname}.{item.name}"] = module.name
                self.classes[qualname] = info
                module.names[node.name] = qualname
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Name):
                        module.names.setdefault(target.id, f"{module.name}.{target.id}")
        for info in self.classes.values():
            if info.module == module.name:
                info.bases = [q for base in info.node.bases if (q := self.resolve_expr(module.name, base))]

    def resolve(self, module: str, name: str, depth: int = 0) -> str | None:
        """The qualified name ``name`` stands for in ``module`` (following re-exports)."""
        found = self.modules[module].names.get(name) if module in self.modules else None
        if found is None or depth > 10:
            return found
        return self.canonical(found, depth)

    def canonical(self, qualname: str, depth: int = 0) -> str:
        if qualname in self.functions or qualname in self.classes or qualname in self.modules:
            return qualname
        owner, _, attr = qualname.rpartition(".")
        if owner in self.modules:
            again = self.resolve(owner, attr, depth + 1)
            if again and again != qualname:
                return again
        return qualname

    def resolve_expr(self, module: str, node: ast.expr) -> str | None:
        """``Name`` or ``module.attr`` chains as a qualified name."""
        if isinstance(node, ast.Name):
            return self.resolve(module, node.id)
        if isinstance(node, ast.Attribute):
            owner = self.resolve_expr(module, node.value)
            if owner and owner in self.modules:
                return self.canonical(f"{owner}.{node.attr}")
        if isinstance(node, ast.Subscript):  # Generic[...] bases
            return self.resolve_expr(module, node.value)
        return None

    def ancestors(self, qualname: str) -> Iterator[ClassInfo]:
        seen = set()
        stack = [qualname]
        while stack:
            current = stack.pop()
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            yield self.classes[current]
            stack.extend(self.classes[current].bases)

    def method(self, cls: str, name: str) -> str | None:
        key = (cls, name)
        if key not in self._methods:
            self._methods[key] = self._method(cls, name)
        return self._methods[key]

    def _method(self, cls: str, name: str) -> str | None:
        for info in self.ancestors(cls):
            if name in info.methods:
                return f"{info.qualname}.{name}"
        return None


@cache
def index() -> Index:
    return Index()


# --- 1. repository calls -----------------------------------------------------------------------


def _init_params(info: ClassInfo, code: Index) -> list[tuple[str, str | None]]:
    """The constructor's parameters (name, boto3 kind or None), the base's when it has none."""
    for ancestor in code.ancestors(info.qualname):
        init = ancestor.methods.get("__init__")
        if init is not None:
            params = []
            for arg in init.args.args[1:] + init.args.kwonlyargs:
                annotation = ast.unparse(arg.annotation) if arg.annotation else ""
                params.append((arg.arg, CLIENT_TYPES.get(annotation.split(".")[-1])))
            return params
    return []


_SELF_ATTRIBUTES: dict[str, dict[str, str]] = {}


def _self_attributes(info: ClassInfo, code: Index) -> dict[str, str]:
    """``self.<attribute>`` -> the constructor parameter assigned to it."""
    if info.qualname not in _SELF_ATTRIBUTES:
        _SELF_ATTRIBUTES[info.qualname] = _self_attributes_uncached(info, code)
    return _SELF_ATTRIBUTES[info.qualname]


def _self_attributes_uncached(info: ClassInfo, code: Index) -> dict[str, str]:
    found: dict[str, str] = {}
    for ancestor in code.ancestors(info.qualname):
        init = ancestor.methods.get("__init__")
        if init is None:
            continue
        for node in ast.walk(init):
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(target := node.targets[0], ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and isinstance(node.value, ast.Name)
            ):
                found.setdefault(target.attr, node.value.id)
    return found


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _constant(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _camel(operation: str) -> str:
    return "".join(part.capitalize() for part in operation.split("_"))


class _MethodReader:
    """The calls one repository method makes; ``bound`` names what its own parameters hold (a
    private helper called with ``self._main``)."""

    def __init__(self, info: ClassInfo, code: Index) -> None:
        self._body: ast.AST = info.node
        self.info = info
        self.code = code
        self.kinds = dict(_init_params(info, code))
        self.attributes = _self_attributes(info, code)

    def _method_node(self, name: str) -> ast.FunctionDef | None:
        for ancestor in self.code.ancestors(self.info.qualname):
            if name in ancestor.methods:
                return ancestor.methods[name]
        return None

    def _request_nodes(self, call: ast.Call, items: ast.expr | None) -> list[ast.AST]:
        """Where a transaction's items are written: the call, or, for a list built first, the
        method's body and the bodies of the methods it calls to build an item."""
        if not isinstance(items, ast.Name):
            return list(ast.walk(call))
        found = list(ast.walk(self._body))
        for node in list(found):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self"
                and (helper := self._method_node(node.func.attr)) is not None
            ):
                found += list(ast.walk(helper))
        return found

    def slot_of(self, node: ast.expr | None, bound: dict[str, str], local: dict[str, ast.expr]) -> str | None:
        """The constructor parameter an expression holds (``self._table``, ``self._table.name``,
        a local assigned from one, or a parameter bound by the caller)."""
        if node is None:
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return self.attributes.get(node.attr)
        if isinstance(node, ast.Attribute) and node.attr == "name":
            return self.slot_of(node.value, bound, local)
        # table.meta.client: the table's own client (transactions and batches name the table)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "client"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "meta"
        ):
            return self.slot_of(node.value.value, bound, local)
        if isinstance(node, ast.Name):
            if node.id in bound:
                return bound[node.id]
            if node.id in local:
                return self.slot_of(local[node.id], bound, local)
        return None

    def calls(self, method: str, bound: dict[str, str] | None = None, depth: int = 0) -> set[Call]:
        return self._calls_in(self._method_node(method), bound or {}, depth, self.info.module)

    def _helper_function(self, function: ast.expr, module: str) -> tuple[ast.FunctionDef, str] | None:
        """A module-level function of ``shared.repositories`` called by name (``query_all(table,
        ...)``, ``get_many_consistent(self._table, keys)``): its calls are the caller's, its
        parameters bound to what the caller passes."""
        if not isinstance(function, ast.Name):
            return None
        qualname = self.code.resolve(module, function.id)
        if qualname is None or not qualname.startswith(REPOSITORIES) or qualname not in self.code.functions:
            return None
        owner = qualname.rpartition(".")[0]
        node = self.code.functions[qualname]
        return (node, owner) if owner in self.code.modules and isinstance(node, ast.FunctionDef) else None

    def _calls_in(
        self, node: ast.FunctionDef | None, bound: dict[str, str], depth: int, module: str
    ) -> set[Call]:
        if node is None or depth > 5:
            return set()
        local: dict[str, ast.expr] = {}
        for item in ast.walk(node):
            # a request built as a dict and re-sent with what is left: the dict names the tables
            if (
                isinstance(item, ast.Assign)
                and len(item.targets) == 1
                and isinstance(item.targets[0], ast.Name)
                and not isinstance(local.get(item.targets[0].id), ast.Dict)
            ):
                local[item.targets[0].id] = item.value
            elif (
                isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and item.value
                and not isinstance(local.get(item.target.id), ast.Dict)
            ):
                local[item.target.id] = item.value
        found: set[Call] = set()
        for item in ast.walk(node):
            if not isinstance(item, ast.Call):
                continue
            function = item.func
            # self._helper(self._main, ...): the helper's calls, its parameters bound
            if (
                isinstance(function, ast.Attribute)
                and isinstance(function.value, ast.Name)
                and function.value.id == "self"
                and (helper := self._method_node(function.attr)) is not None
            ):
                names = [a.arg for a in helper.args.args[1:]]
                inner = {
                    name: slot
                    for name, arg in zip(names, item.args, strict=False)
                    if (slot := self.slot_of(arg, bound, local))
                }
                found |= self.calls(function.attr, inner, depth + 1)
                continue
            # query_all(self._table, IndexName=...)
            if isinstance(function, ast.Name) and function.id == "query_all" and item.args:
                slot = self.slot_of(item.args[0], bound, local)
                if slot:
                    found.add(Call("dynamodb:Query", slot, index=_constant(_keyword(item, "IndexName"))))
                continue
            if (helper_function := self._helper_function(function, module)) is not None:
                helper_node, helper_module = helper_function
                names = [a.arg for a in helper_node.args.args]
                inner = {
                    name: slot
                    for name, arg in zip(names, item.args, strict=False)
                    if (slot := self.slot_of(arg, bound, local))
                }
                found |= self._calls_in(helper_node, inner, depth + 1, helper_module)
                continue
            if not isinstance(function, ast.Attribute):
                continue
            # client.get_paginator("list_objects_v2").paginate(Bucket=...): the paginated operation
            paginator = function.value
            if (
                function.attr == "paginate"
                and isinstance(paginator, ast.Call)
                and isinstance(paginator.func, ast.Attribute)
                and paginator.func.attr == "get_paginator"
                and (operation := _constant(paginator.args[0] if paginator.args else None))
                and (receiver := self.slot_of(paginator.func.value, bound, local)) is not None
            ):
                self._body = node  # a transaction's items may be appended to a list first
                found |= self._operation(receiver, operation, item, bound, local)
                continue
            receiver = self.slot_of(function.value, bound, local)
            if receiver is None:
                continue
            self._body = node
            found |= self._operation(receiver, function.attr, item, bound, local)
        return found

    def _operation(
        self, receiver: str, operation: str, call: ast.Call, bound: dict[str, str], local: dict[str, ast.expr]
    ) -> set[Call]:
        kind = self.kinds.get(receiver)
        if kind == "dynamodb-table" and operation in (
            "transact_write_items",
            "batch_get_item",
            "transact_get_items",
        ):
            kind = "dynamodb"  # called on table.meta.client: the tables are named in the request
        if kind == "dynamodb-table":
            if operation == "batch_writer":
                return {Call("dynamodb:BatchWriteItem", receiver)}
            if operation in ("put_item", "get_item", "update_item", "delete_item", "query", "scan"):
                return {
                    Call(
                        f"dynamodb:{_camel(operation)}",
                        receiver,
                        index=_constant(_keyword(call, "IndexName")),
                    )
                }
            return set()
        if kind == "dynamodb":
            if operation == "transact_write_items":
                kinds = {
                    "Put": "PutItem",
                    "Update": "UpdateItem",
                    "Delete": "DeleteItem",
                    "ConditionCheck": "ConditionCheckItem",
                }
                found = set()
                items = _keyword(call, "TransactItems")
                for node in self._request_nodes(call, items):
                    if isinstance(node, ast.Dict):
                        for key, value in zip(node.keys, node.values, strict=True):
                            if _constant(key) in kinds and isinstance(value, ast.Dict):
                                table = next(
                                    (
                                        v
                                        for k, v in zip(value.keys, value.values, strict=True)
                                        if _constant(k) == "TableName"
                                    ),
                                    None,
                                )
                                slot = self.slot_of(table, bound, local)
                                if slot:
                                    found.add(Call(f"dynamodb:{kinds[_constant(key)]}", slot))  # type: ignore[index]
                return found
            if operation in ("batch_get_item", "batch_write_item"):
                requests = _keyword(call, "RequestItems")
                if isinstance(requests, ast.Name) and requests.id in local:
                    requests = local[requests.id]
                slots = (
                    {named for key in requests.keys if (named := self.slot_of(key, bound, local))}
                    if isinstance(requests, ast.Dict)
                    else set()
                )
                return {Call(f"dynamodb:{_camel(operation)}", slot) for slot in slots}
            if operation in ("put_item", "get_item", "update_item", "delete_item", "query", "scan"):
                slot = self.slot_of(_keyword(call, "TableName"), bound, local)
                if slot:
                    return {
                        Call(
                            f"dynamodb:{_camel(operation)}",
                            slot,
                            index=_constant(_keyword(call, "IndexName")),
                        )
                    }
            return set()
        if kind == "s3":
            bucket_slot = self.slot_of(_keyword(call, "Bucket"), bound, local)
            if operation == "generate_presigned_url":  # authorized as its signer when used
                params = _keyword(call, "Params")
                bucket = None
                if isinstance(params, ast.Dict):
                    bucket = next(
                        (
                            v
                            for k, v in zip(params.keys, params.values, strict=True)
                            if _constant(k) == "Bucket"
                        ),
                        None,
                    )
                slot = self.slot_of(bucket, bound, local)
                operation = _constant(call.args[0]) if call.args else None  # type: ignore[assignment]
                if slot and operation in S3_ACTIONS:
                    action, part = S3_ACTIONS[operation]
                    return {Call(action, slot, part=part)}
                return set()
            if operation == "generate_presigned_post" and bucket_slot:
                return {Call("s3:PutObject", bucket_slot, part="object")}
            if operation == "delete_objects" and bucket_slot:
                versioned = "VersionId" in ast.unparse(call) or any(
                    "VersionId" in ast.unparse(value) for value in local.values()
                )
                return {
                    Call(
                        "s3:DeleteObjectVersion" if versioned else "s3:DeleteObject",
                        bucket_slot,
                        part="object",
                    )
                }
            if operation in S3_ACTIONS and bucket_slot:
                action, part = S3_ACTIONS[operation]
                return {Call(action, bucket_slot, part=part)}
            return set()
        if kind in ("kms", "secretsmanager", "states", "cognito-idp"):
            if operation in ("exceptions", "meta") or operation.startswith("_"):
                return set()
            string_params = [name for name, k in self.kinds.items() if k is None]
            # the resource: the one string parameter the class was built with (key, secret, state
            # machine, user pool)
            resource = next((name for name in string_params if name.endswith(("_id", "_arn"))), None)
            if resource is None:
                return set()
            execution = "execution" if operation == "describe_execution" else None
            return {Call(f"{kind}:{_camel(operation)}", resource, part=execution)}
        return set()


@cache
def repository_calls() -> dict[str, dict[str, frozenset[Call]]]:
    """``{repository class: {method: calls}}`` for every class of ``shared/repositories``."""
    code = index()
    found: dict[str, dict[str, frozenset[Call]]] = {}
    for qualname, info in code.classes.items():
        if not info.module.startswith(REPOSITORIES):
            continue
        reader = _MethodReader(info, code)
        if not any(kind for _, kind in _init_params(info, code)):
            continue
        methods = {}
        for ancestor in code.ancestors(qualname):
            for name in ancestor.methods:
                if name != "__init__" and name not in methods:
                    methods[name] = frozenset(reader.calls(name))
        found[qualname] = methods
    return found


# --- 2. what a function reaches ----------------------------------------------------------------

# Code outside this repository that calls AWS for the service: Powertools' idempotency layer, built
# in ``shared.wiring.idempotency_store`` (``persistence/dynamodb.py``: put_item to claim a key,
# get_item when it is taken, update_item with the result, delete_item when the call failed).
LIBRARY_CALLS: dict[str, dict[str, frozenset[Call]]] = {
    "aws_lambda_powertools.utilities.idempotency.DynamoDBPersistenceLayer": {
        "idempotent requests": frozenset(
            Call(f"dynamodb:{action}", "table_name")
            for action in ("PutItem", "GetItem", "UpdateItem", "DeleteItem")
        )
    }
}
# Calls on receivers the analysis loses that are not the service's objects, so never dispatched by
# name (``first.get(...)`` would otherwise reach ``S3BlobStore.get`` in every function that builds one).
NOT_REPOSITORY_CALLS = {
    ("shared.api", "first.get"),  # a validation error: a dict
    ("shared.deadline", "_CONTEXT.get"),  # a ContextVar
}
# A mapping's methods called with no argument or a literal name on a receiver the analysis lost
# are a dict's or a ContextVar's (``params.get('name')``, ``raw_event.get("headers")``,
# ``_CONTEXT.get()``), never dispatched by name: the repositories' ``get`` take a key computed by the
# caller.
MAPPING_METHODS = {"get", "setdefault", "pop"}
# The Powertools resolver's route decorators (``@app.delete(...)`` is no S3BlobStore.delete).
ROUTE_DECORATORS = {f"app.{verb}" for verb in ("get", "post", "put", "patch", "delete", "route")}
_RESOURCE_SUFFIXES = ("_table", "_bucket", "_key_id", "_arn", "_pool_id")
# Methods of a container a collaborator may sit in (``self.objects.items()``): its contents.
_CONTAINER_METHODS = {"items", "values", "copy"}


@dataclass(frozen=True)
class Obj:
    """An object built by a constructor call at ``site`` (one per call site, whatever the caller)."""

    cls: str
    site: str


@dataclass(frozen=True)
class Fn:
    """A function, or a method bound to ``receiver``."""

    qualname: str
    receiver: Obj | None = None


@dataclass(frozen=True)
class Lam:
    """A lambda (its body is read where it was written)."""

    site: str


Value = Obj | Fn | Lam


@dataclass(frozen=True)
class Context:
    module: str
    function: str | None  # qualname; None at module level
    receiver: Obj | None
    node: ast.AST


def _settings_fields(node: ast.expr) -> list[str]:
    """The settings fields an argument reads (``settings().main_table``, ``config.data_bucket``)."""
    return [
        item.attr
        for item in ast.walk(node)
        if isinstance(item, ast.Attribute) and item.attr.islower() and item.attr.endswith(_RESOURCE_SUFFIXES)
    ]


def _locals(node: ast.AST) -> dict[str, list[ast.expr]]:
    """What each local name of a function is assigned (``for`` targets: the iterable)."""
    found: dict[str, list[ast.expr]] = defaultdict(list)

    def bind(target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Name):
            found[target.id].append(value)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                bind(element, value)

    for item in ast.walk(node):
        if isinstance(item, ast.Assign):
            for target in item.targets:
                bind(target, item.value)
        elif isinstance(item, ast.AnnAssign | ast.AugAssign) and item.value is not None:
            bind(item.target, item.value)
        elif isinstance(item, ast.For | ast.comprehension):
            bind(item.target, item.iter)
        elif isinstance(item, ast.withitem) and item.optional_vars is not None:
            bind(item.optional_vars, item.context_expr)
        elif isinstance(item, ast.NamedExpr):
            bind(item.target, item.value)
    return found


class Reach:
    """What one handler's code reaches: objects built, (receiver, function) pairs run, and the
    values that flow into fields and parameters (a flow-insensitive points-to analysis, one abstract
    object per constructor call site). A method called on a receiver the analysis cannot follow
    (a parameter no reached call fills, an item of a list, a library's return) is dispatched by
    name to every object built (rapid type analysis), so the result over-approximates."""

    def __init__(self, handler_module: str, code: Index) -> None:
        self.code = code
        self.objects: set[Obj] = set()
        self.fields: dict[Obj, dict[str, set[Value]]] = defaultdict(lambda: defaultdict(set))
        self.resources: dict[Obj, dict[str, str]] = defaultdict(dict)
        self.slots: dict[tuple[str, str], set[Value]] = defaultdict(set)
        self.unknown_slots: set[tuple[str, str]] = set()
        self.reached: set[tuple[Obj | None, str]] = set()
        self.lambdas: dict[str, tuple[ast.Lambda, Context]] = {}
        self.strings: set[str] = set()
        # (object, method) reached only by name from a receiver the analysis lost: where
        self.by_name: dict[tuple[Obj, str], str] = {}
        self._locals: dict[int, dict[str, list[ast.expr]]] = {}
        self._size = 0
        self._returns: dict[tuple[Obj | None, str], tuple[set[Value], bool]] = {}
        self._declared_memo: dict[tuple[int, Obj | None, str | None], set[str] | None] = {}
        self._field_types: dict[tuple[str, str], tuple[str, ast.expr] | None] = {}
        self._param_names: dict[str, list[str]] = {}
        self._node_lists: dict[int, list[ast.AST]] = {}
        self._local_type_maps: dict[str, dict[str, ast.expr]] = {}
        self._method_owners: dict[tuple[str, int], list[tuple[Obj, str]]] = {}
        self._busy: set[object] = set()
        module = code.modules[handler_module]
        entry = Context(handler_module, None, None, module.tree)
        entries = [
            f"{handler_module}.{node.name}"
            for node in module.tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for qualname in entries:
            for arg in self._params(qualname):
                self.unknown_slots.add((qualname, arg))
            self.reached.add((None, qualname))
        while True:
            self._returns = {}
            self._declared_memo = {}
            self._walk(entry, module.tree, top_level=True)
            for receiver, qualname in sorted(self.reached, key=lambda pair: (pair[1], str(pair[0]))):
                node = code.functions[qualname]
                context = Context(code.function_module[qualname], qualname, receiver, node)
                self._walk(context, node)
            size = self._measure()
            if size == self._size:
                return
            self._size = size

    # -- bookkeeping

    def _measure(self) -> int:
        return (
            len(self.objects)
            + sum(len(values) for fields in self.fields.values() for values in fields.values())
            + sum(len(values) for values in self.slots.values())
            + len(self.unknown_slots)
            + len(self.reached)
            + len(self.lambdas)
        )

    def _params(self, qualname: str) -> list[str]:
        if qualname not in self._param_names:
            self._param_names[qualname] = self._params_uncached(qualname)
        return self._param_names[qualname]

    def _params_uncached(self, qualname: str) -> list[str]:
        node = self.code.functions[qualname]
        names = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
        if (
            "." in qualname
            and qualname.rsplit(".", 1)[0] in self.code.classes
            and names[:1] in (["self"], ["cls"])
        ):
            names = names[1:]
        return names

    def methods(self, obj: Obj) -> set[str]:
        """The methods reached on ``obj`` (short names)."""
        return {qualname.rsplit(".", 1)[-1] for receiver, qualname in self.reached if receiver == obj}

    # -- walking

    def _nodes(self, node: ast.AST, top_level: bool) -> list[ast.AST]:
        """The calls, assignments and strings of a function (or of a module's own statements)."""
        key = id(node)
        if key not in self._node_lists:
            if top_level:
                items = [
                    item
                    for statement in node.body  # type: ignore[attr-defined]
                    if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    for item in ast.walk(statement)
                ]
            else:
                items = list(ast.walk(node))
            self._node_lists[key] = [
                item
                for item in items
                if isinstance(item, ast.Call | ast.Assign | ast.AnnAssign)
                or (isinstance(item, ast.Constant) and isinstance(item.value, str))
            ]
        return self._node_lists[key]

    def _walk(self, context: Context, node: ast.AST, top_level: bool = False) -> None:
        for item in self._nodes(node, top_level):
            if isinstance(item, ast.Call):
                self._call(item, context)
            elif isinstance(item, ast.Assign | ast.AnnAssign) and context.receiver is not None and item.value:
                for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "self"
                    ):
                        values, _ = self.eval(item.value, context)
                        self.fields[context.receiver][target.attr] |= values
            elif isinstance(item, ast.Constant) and isinstance(item.value, str):
                self.strings.add(item.value)

    def _site(self, context: Context, node: ast.AST) -> str:
        return f"{context.module}:{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}"

    # -- values

    def eval(self, node: ast.expr | None, context: Context) -> tuple[set[Value], bool]:
        """The values ``node`` may hold, and whether it may hold something the analysis lost."""
        if node is None:
            return set(), False
        key = (id(node), context.receiver, context.function)
        if key in self._busy:
            return set(), False
        self._busy.add(key)
        try:
            return self._eval(node, context)
        finally:
            self._busy.discard(key)

    def _union(self, nodes: list[ast.expr], context: Context) -> tuple[set[Value], bool]:
        values: set[Value] = set()
        unknown = False
        for item in nodes:
            found, lost = self.eval(item, context)
            values |= found
            unknown = unknown or lost
        return values, unknown

    def _eval(self, node: ast.expr, context: Context) -> tuple[set[Value], bool]:
        code = self.code
        if isinstance(node, ast.Constant | ast.JoinedStr | ast.Compare | ast.BinOp | ast.UnaryOp):
            return set(), False
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            return set(), False
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            return self._union(list(node.elts), context)
        if isinstance(node, ast.Dict):
            return self._union([v for v in node.values if v is not None], context)
        if isinstance(node, ast.IfExp):
            return self._union([node.body, node.orelse], context)
        if isinstance(node, ast.BoolOp):
            return self._union(list(node.values), context)
        if isinstance(node, ast.Await | ast.Starred):
            return self.eval(node.value, context)
        if isinstance(node, ast.NamedExpr):
            return self.eval(node.value, context)
        if isinstance(node, ast.Subscript):
            return self.eval(node.value, context)
        if isinstance(node, ast.Lambda):
            site = self._site(context, node)
            self.lambdas.setdefault(site, (node, context))
            return {Lam(site)}, False
        if isinstance(node, ast.Call):
            return self._call(node, context)
        if isinstance(node, ast.Name):
            return self._name(node.id, context)
        if isinstance(node, ast.Attribute):
            target = code.resolve_expr(context.module, node)
            if target is not None and target in code.functions:
                return {Fn(target)}, False
            receivers, unknown = self.eval(node.value, context)
            values: set[Value] = set()
            for receiver in receivers:
                if not isinstance(receiver, Obj):
                    continue
                fields = self.fields[receiver]
                name = self._attribute_param(receiver, node.attr)
                if name in fields:
                    values |= fields[name]
                elif (method := code.method(receiver.cls, node.attr)) is not None:
                    if self._is_property(method):
                        found, lost = self._returns_of(Fn(method, receiver))
                        values |= found
                        unknown = unknown or lost
                    else:
                        values.add(Fn(method, receiver))
                else:
                    unknown = True
            return values, unknown or not receivers
        return set(), True

    def _name(self, name: str, context: Context) -> tuple[set[Value], bool]:
        code = self.code
        if name == "self" and context.receiver is not None:
            return {context.receiver}, False
        if context.function is not None:
            local = self._function_locals(context)
            if name in local:
                return self._union(local[name], context)
            if name in self._params(context.function):
                slot = (context.function, name)
                defaults = self._default(context.function, name)
                values, unknown = self.eval(defaults, context) if defaults is not None else (set(), False)
                return self.slots[slot] | values, unknown or slot in self.unknown_slots
        target = code.resolve(context.module, name)
        if target in code.functions:
            return {Fn(target)}, False
        if target in code.classes:
            return set(), False
        return set(), True

    def _default(self, qualname: str, name: str) -> ast.expr | None:
        node = self.code.functions[qualname]
        positional = node.args.posonlyargs + node.args.args
        for arg, default in zip(
            positional[len(positional) - len(node.args.defaults) :], node.args.defaults, strict=True
        ):
            if arg.arg == name:
                return default
        for arg, keyword_default in zip(node.args.kwonlyargs, node.args.kw_defaults, strict=True):
            if arg.arg == name:
                return keyword_default
        return None

    def _function_locals(self, context: Context) -> dict[str, list[ast.expr]]:
        key = id(context.node)
        if key not in self._locals:
            self._locals[key] = _locals(context.node)
        return self._locals[key]

    def _attribute_param(self, obj: Obj, attribute: str) -> str:
        """``self._table`` -> the constructor parameter ``table`` it was assigned from."""
        info = self.code.classes.get(obj.cls)
        if info is None:
            return attribute
        return _self_attributes(info, self.code).get(attribute, attribute)

    def _is_property(self, qualname: str) -> bool:
        node = self.code.functions[qualname]
        return any(
            (isinstance(d, ast.Name) and d.id in ("property", "cached_property"))
            or (isinstance(d, ast.Attribute) and d.attr == "cached_property")
            for d in node.decorator_list
        )

    # -- calls

    def _call(self, node: ast.Call, context: Context) -> tuple[set[Value], bool]:
        code = self.code
        if isinstance(node.func, ast.Name) and node.func.id == "getattr" and len(node.args) >= 2:
            return self._getattr(node, context)
        target = code.resolve_expr(context.module, node.func)
        if target is not None:
            target = code.canonical(target)
            if target in code.classes:
                return self._construct(target, node, context), False
            if target in LIBRARY_CALLS:
                obj = Obj(target, self._site(context, node))
                self.objects.add(obj)
                for keyword in node.keywords:
                    fields = _settings_fields(keyword.value) if keyword.arg else []
                    if keyword.arg and len(fields) == 1:
                        self.resources[obj][keyword.arg] = fields[0]
                return {obj}, False
            if target.endswith(("functools.partial", "dataclasses.replace")) and node.args:
                values, unknown = self.eval(node.args[0], context)
                for value in values:
                    if isinstance(value, Obj):
                        for keyword in node.keywords:
                            if keyword.arg:
                                self._set_field(value, keyword.arg, keyword.value, context)
                    elif isinstance(value, Fn) and target.endswith("partial"):
                        self._bind(value, node.args[1:], node.keywords, context)
                return values, unknown
        callees, unknown = self.eval(node.func, context)
        results: set[Value] = set()
        lost = False
        for callee in callees:
            returned, missing = self._invoke(callee, node, context)
            results |= returned
            lost = lost or missing
        if unknown and not callees:
            if isinstance(node.func, ast.Attribute):
                receivers, _ = self.eval(node.func.value, context)
                if node.func.attr in _CONTAINER_METHODS and receivers:
                    return receivers, False
                # a receiver the analysis lost: every object built that has the method and may be
                # of the receiver's declared type
                allowed = self._declared(node.func.value, context)
                lost_dict = (
                    (context.module, ast.unparse(node.func)) in NOT_REPOSITORY_CALLS
                    or ast.unparse(node.func) in ROUTE_DECORATORS
                    # a module's constant (COUNTRY_ALIASES.get(code, code)): a mapping, no repository
                    or (isinstance(node.func.value, ast.Name) and node.func.value.id.isupper())
                    or (
                        node.func.attr in MAPPING_METHODS
                        and (not node.args or _constant(node.args[0]) is not None)
                    )
                )
                for obj, method in [] if lost_dict else self._with_method(node.func.attr):
                    if allowed is None or self._conforms(obj.cls, allowed):
                        self.by_name.setdefault((obj, method), self._site(context, node))
                        returned, _ = self._invoke(Fn(method, obj), node, context)
                        results |= returned
            # a library call: the functions it is given may be called back
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                values, _ = self.eval(argument, context)
                for value in values:
                    if isinstance(value, Fn | Lam):
                        self._invoke(value, None, context)
            return results, True
        return results, lost

    # -- declared types, for receivers the analysis lost

    def _declared(self, node: ast.expr, context: Context) -> set[str] | None:
        key = (id(node), context.receiver, context.function)
        if key not in self._declared_memo:
            self._declared_memo[key] = None  # a cycle: nothing declared
            self._declared_memo[key] = self._declared_uncached(node, context)
        return self._declared_memo[key]

    def _declared_uncached(self, node: ast.expr, context: Context) -> set[str] | None:
        """The classes of this code ``node``'s declared type may be (its annotation as a parameter,
        a field, or the return of the call that made it); an empty set when it may be none of them
        (``dict[str, Any]``, ``Path``, a boto3 table: no repository), None when nothing is declared."""
        values, unknown = self.eval(node, context)
        if not values and not unknown:
            return set()
        annotation = self._annotation(node, context)
        if annotation is None:
            return None
        return self._classes_of(*annotation)

    def _classes_of(self, module: str, expr: ast.expr) -> set[str] | None:
        code = self.code
        if isinstance(expr, ast.Constant):
            if isinstance(expr.value, str):
                return self._classes_of(module, ast.parse(expr.value, mode="eval").body)
            return set()
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
            left, right = self._classes_of(module, expr.left), self._classes_of(module, expr.right)
            return None if left is None or right is None else left | right
        if isinstance(expr, ast.Subscript):
            outer = ast.unparse(expr.value).rsplit(".", 1)[-1]
            if outer in ("Optional", "Union", "Annotated"):
                elements = expr.slice.elts if isinstance(expr.slice, ast.Tuple) else [expr.slice]
                if outer == "Annotated":
                    elements = elements[:1]
                found: set[str] = set()
                for element in elements:
                    classes = self._classes_of(module, element)
                    if classes is None:
                        return None
                    found |= classes
                return found
            expr = expr.value
        if isinstance(expr, ast.Name | ast.Attribute):
            name = ast.unparse(expr)
            if name.rsplit(".", 1)[-1] in ("Any", "object"):
                return None
            target = (
                code.resolve_expr(module, expr)
                if isinstance(expr, ast.Attribute)
                else code.resolve(module, name)
            )
            target = code.canonical(target) if target else None
            return {target} if target in code.classes else set()
        return None

    def _annotation(self, node: ast.expr, context: Context) -> tuple[str, ast.expr] | None:
        code = self.code
        if isinstance(node, ast.Name) and context.function is not None:
            declared = self._local_types(context.function)
            if node.id in declared:
                return context.module, declared[node.id]
            assigned = self._function_locals(context).get(node.id, [])
            if len(assigned) == 1:
                return self._annotation(assigned[0], context)
            return None
        if isinstance(node, ast.Attribute):
            receivers, _ = self.eval(node.value, context)
            classes = {r.cls for r in receivers if isinstance(r, Obj)}
            if not classes:
                declared_classes = self._declared(node.value, context)
                if declared_classes == set():
                    return context.module, ast.Constant(value=None)
                classes = declared_classes or set()
            for cls in classes:
                if cls in code.classes:
                    found = self._field_annotation(cls, node.attr)
                    if found is not None:
                        return found
            return None
        if isinstance(node, ast.Subscript):  # an item of a container: its declared item type
            container = self._annotation(node.value, context)
            if (
                container is not None
                and isinstance(container[1], ast.Constant)
                and container[1].value is None
            ):
                return container  # an item of a library's value
            if container is not None and isinstance(container[1], ast.Subscript):
                items = container[1].slice
                return container[0], items.elts[-1] if isinstance(items, ast.Tuple) else items
            return None
        if isinstance(node, ast.IfExp | ast.BoolOp):
            branches = [node.body, node.orelse] if isinstance(node, ast.IfExp) else node.values
            if all(self._declared(branch, context) == set() for branch in branches):
                return context.module, ast.Constant(value=None)
            return None
        if isinstance(node, ast.Call):
            return self._return_annotation(node, context)
        return None

    def _local_types(self, qualname: str) -> dict[str, ast.expr]:
        """The annotations of a function's parameters (its nested functions' too) and locals."""
        if qualname not in self._local_type_maps:
            found: dict[str, ast.expr] = {}
            for inner in ast.walk(self.code.functions[qualname]):
                if isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                    for arg in inner.args.posonlyargs + inner.args.args + inner.args.kwonlyargs:
                        if arg.annotation is not None:
                            found.setdefault(arg.arg, arg.annotation)
                elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                    found.setdefault(inner.target.id, inner.annotation)
            self._local_type_maps[qualname] = found
        return self._local_type_maps[qualname]

    def _with_method(self, name: str) -> list[tuple[Obj, str]]:
        """Every object built that has a method ``name``, with the method."""
        key = (name, len(self.objects))
        if key not in self._method_owners:
            self._method_owners[key] = [
                (obj, method)
                for obj in self.objects
                if (method := self.code.method(obj.cls, name)) is not None
            ]
        return self._method_owners[key]

    def _return_annotation(self, node: ast.Call, context: Context) -> tuple[str, ast.expr] | None:
        code = self.code
        library = (context.module, ast.Constant(value=None))  # declared, and none of this code's
        callees, _ = self.eval(node.func, context)
        for callee in callees:
            if isinstance(callee, Fn) and callee.qualname in code.functions:
                returns = code.functions[callee.qualname].returns
                if returns is not None:
                    return code.function_module[callee.qualname], returns
        if callees:
            return None
        if isinstance(node.func, ast.Name):
            target = code.resolve(context.module, node.func.id)
            if target is not None and code.canonical(target) not in code.functions | code.classes.keys():
                return library  # a library's function or class
            return None
        if not isinstance(node.func, ast.Attribute):
            return None
        receivers, _ = self.eval(node.func.value, context)
        for receiver in receivers:
            if isinstance(receiver, Obj) and receiver.cls in code.classes:
                field_type = self._field_annotation(receiver.cls, node.func.attr)
                if field_type is not None:  # a field holding a callable: what it returns
                    module, expr = field_type
                    for item in ast.walk(expr):
                        if (
                            isinstance(item, ast.Subscript)
                            and ast.unparse(item.value).endswith("Callable")
                            and isinstance(item.slice, ast.Tuple)
                        ):
                            return module, item.slice.elts[-1]
        declared = self._declared(node.func.value, context)
        if declared == set():
            return library  # a method of a library's object (a boto3 table, a path)
        for cls in declared or ():
            method = code.method(cls, node.func.attr)
            if method is not None and code.functions[method].returns is not None:
                return code.function_module[method], code.functions[method].returns  # type: ignore[return-value]
        return None

    def _field_annotation(self, cls: str, attribute: str) -> tuple[str, ast.expr] | None:
        key = (cls, attribute)
        if key not in self._field_types:
            self._field_types[key] = self._field_annotation_uncached(cls, attribute)
        return self._field_types[key]

    def _field_annotation_uncached(self, cls: str, attribute: str) -> tuple[str, ast.expr] | None:
        for info in self.code.ancestors(cls):
            for item in ast.walk(info.node):
                if not isinstance(item, ast.AnnAssign):
                    continue
                target = item.target
                if (isinstance(target, ast.Name) and target.id == attribute) or (
                    isinstance(target, ast.Attribute) and target.attr == attribute
                ):
                    return info.module, item.annotation
            init = info.methods.get("__init__")
            param = _self_attributes(info, self.code).get(attribute)
            if init is not None and param is not None:
                for arg in init.args.args + init.args.kwonlyargs:
                    if arg.arg == param and arg.annotation is not None:
                        return info.module, arg.annotation
        return None

    def _conforms(self, cls: str, declared: set[str]) -> bool:
        """Whether an object of ``cls`` may be of one of the ``declared`` classes: a subclass, or
        one with every method of a declared protocol."""
        ancestors = {info.qualname for info in self.code.ancestors(cls)}
        for name in declared:
            if name in ancestors:
                return True
            info = self.code.classes[name]
            if any(
                self.code.resolve(info.module, ast.unparse(b).split("[")[0]) == "typing.Protocol"
                for b in info.node.bases
            ):
                wanted = {m for m in info.methods if not m.startswith("__")}
                if wanted and all(self.code.method(cls, m) for m in wanted):
                    return True
        return False

    def _getattr(self, node: ast.Call, context: Context) -> tuple[set[Value], bool]:
        """``getattr(obj, name)``: the named attribute, or with a computed name every method of the
        object's class (``getattr(self, STEP_ACTIONS[step])``)."""
        name = _constant(node.args[1])
        if name is not None:
            return self.eval(ast.Attribute(value=node.args[0], attr=name, ctx=ast.Load()), context)
        receivers, unknown = self.eval(node.args[0], context)
        values: set[Value] = set()
        for receiver in receivers:
            if isinstance(receiver, Obj):
                for info in self.code.ancestors(receiver.cls):
                    values |= {Fn(f"{info.qualname}.{method}", receiver) for method in info.methods}
        return values, unknown

    def _construct(self, cls: str, node: ast.Call, context: Context) -> set[Value]:
        obj = Obj(cls, self._site(context, node))
        self.objects.add(obj)
        params = self._constructor_params(cls)
        for param, argument in zip(params, node.args, strict=False):
            self._set_field(obj, param, argument, context)
        for keyword in node.keywords:
            if keyword.arg:
                self._set_field(obj, keyword.arg, keyword.value, context)
        for name in ("__init__", "__post_init__", "__enter__", "__exit__", "__iter__"):
            method = self.code.method(cls, name)
            if method is not None:
                self._reach(obj, method)
        return {obj}

    def _constructor_params(self, cls: str) -> list[str]:
        method = self.code.method(cls, "__init__")
        if method is not None:
            return self._params(method)
        fields = []
        for info in reversed(list(self.code.ancestors(cls))):
            fields += [
                item.target.id
                for item in info.node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            ]
        return fields

    def _set_field(self, obj: Obj, name: str, argument: ast.expr, context: Context) -> None:
        values, _ = self.eval(argument, context)
        self.fields[obj][name] |= values
        found = _settings_fields(argument)
        if len(found) == 1:
            self.resources[obj][name] = found[0]

    def _reach(self, receiver: Obj | None, qualname: str) -> None:
        self.reached.add((receiver, qualname))

    def _bind(self, callee: Fn, args: list[ast.expr], keywords: list[ast.keyword], context: Context) -> None:
        if callee.qualname not in self.code.functions:
            return
        params = self._params(callee.qualname)
        for param, argument in zip(params, args, strict=False):
            values, unknown = self.eval(argument, context)
            self.slots[(callee.qualname, param)] |= values
            if unknown:
                self.unknown_slots.add((callee.qualname, param))
        for keyword in keywords:
            if keyword.arg in params:
                values, unknown = self.eval(keyword.value, context)
                self.slots[(callee.qualname, keyword.arg)] |= values
                if unknown:
                    self.unknown_slots.add((callee.qualname, keyword.arg))

    def _invoke(self, callee: Value, node: ast.Call | None, context: Context) -> tuple[set[Value], bool]:
        if isinstance(callee, Lam):
            lam, where = self.lambdas[callee.site]
            self._walk(where, lam.body)
            return self.eval(lam.body, where)
        if isinstance(callee, Obj):
            method = self.code.method(callee.cls, "__call__")
            if method is None:
                return set(), True
            callee = Fn(method, callee)
        if callee.qualname not in self.code.functions:
            return set(), True
        if node is not None:
            self._bind(callee, list(node.args), list(node.keywords), context)
        else:
            for param in self._params(callee.qualname):
                self.unknown_slots.add((callee.qualname, param))
        self._reach(callee.receiver, callee.qualname)
        return self._returns_of(callee)

    def _returns_of(self, callee: Fn) -> tuple[set[Value], bool]:
        key = (callee.receiver, callee.qualname)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = (set(), False)
        node = self.code.functions[callee.qualname]
        context = Context(self.code.function_module[callee.qualname], callee.qualname, callee.receiver, node)
        returned = [
            item.value for item in ast.walk(node) if isinstance(item, ast.Return) and item.value is not None
        ]
        result = self._union(returned, context)
        self._returns[key] = result
        return result


def reach(handler_module: str, code: Index | None = None) -> Reach:
    """What the handler module's code reaches (see ``Reach``)."""
    return Reach(handler_module, code or index())


# --- 3. grants ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Grant:
    """An action on a resource, named as ``scripts.permissions`` names the template's
    (``table/MainTable``, ``table/MainTable/index/gsi1``, ``DataBucket``, ``DataBucket/*``,
    ``key/DataKey``, ``secret:PlatformSecrets``, ``stateMachine:X``, ``execution:X:*``, ``UserPool``)."""

    action: str
    resource: str


def _logical_id(value: Any) -> str | None:
    if isinstance(value, dict):
        if "Ref" in value:
            return str(value["Ref"])
        if "Fn::GetAtt" in value:
            target = value["Fn::GetAtt"]
            return str(target[0] if isinstance(target, list) else target.split(".")[0])
    return None


def _resource(kind: str, logical_id: str, call: Call) -> str:
    if call.action.startswith("dynamodb:"):
        return f"table/{logical_id}" + (f"/index/{call.index}" if call.index else "")
    if call.action.startswith("s3:"):
        return logical_id if call.part == "bucket" else f"{logical_id}/*"
    if call.action.startswith("kms:"):
        return f"key/{logical_id}"
    if call.action.startswith("secretsmanager:"):
        return f"secret:{logical_id}"
    if call.action.startswith("states:"):
        return f"execution:{logical_id}:*" if call.part == "execution" else f"stateMachine:{logical_id}"
    return logical_id


def function_grants(
    handler_module: str, environment: dict[str, Any], template: dict[str, Any]
) -> dict[Grant, set[str]]:
    """``{grant: code paths}`` the function's code may call, its resources named by the function's
    environment in the template."""
    code = index()
    found = reach(handler_module, code)
    grants: dict[Grant, set[str]] = defaultdict(set)
    resources = template["Resources"]
    for obj in found.objects:
        if obj.cls in LIBRARY_CALLS:
            methods = LIBRARY_CALLS[obj.cls]
            reached = set(methods)
        elif obj.cls in repository_calls():
            methods = repository_calls()[obj.cls]
            reached = found.methods(obj) & set(methods)
        else:
            continue
        slots = {
            param: _logical_id(environment.get(setting.upper()))
            for param, setting in found.resources[obj].items()
        }
        short = obj.cls.rsplit(".", 1)[-1]
        for name in sorted(reached):
            for call in methods[name]:
                logical_id = slots.get(call.slot)
                if logical_id is None:
                    continue
                path = f"{short}.{name}"
                grants[Grant(call.action, _resource("", logical_id, call))].add(path)
                for implied in _implied(call, logical_id, resources):
                    grants[implied].add(f"{path} ({call.action})")
    return dict(grants)


def _implied(call: Call, logical_id: str, resources: dict[str, Any]) -> list[Grant]:
    """What S3 and Secrets Manager do with the caller's permissions: the KMS key of an SSE-KMS
    bucket or of a secret."""
    resource = resources.get(logical_id, {})
    properties = resource.get("Properties", {})
    key = None
    if resource.get("Type") == "AWS::S3::Bucket":
        for rule in properties.get("BucketEncryption", {}).get("ServerSideEncryptionConfiguration", []):
            default = rule.get("ServerSideEncryptionByDefault", {})
            if default.get("SSEAlgorithm") == "aws:kms":
                key = _logical_id(default.get("KMSMasterKeyID"))
    elif resource.get("Type") == "AWS::SecretsManager::Secret":
        key = _logical_id(properties.get("KmsKeyId"))
    if key is None:
        return []
    if call.action == "s3:GetObject" or call.action == "secretsmanager:GetSecretValue":
        return [Grant("kms:Decrypt", f"key/{key}")]
    if call.action == "s3:PutObject":
        return [Grant("kms:GenerateDataKey", f"key/{key}")]
    return []
