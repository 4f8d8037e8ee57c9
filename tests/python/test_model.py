# SPDX-License-Identifier: Apache-2.0
"""Construction with keyword arguments, catalogs, topology, and errors."""
import pytest

import gpusched as gs


def test_node_and_cluster_from_keywords():
    n = gs.node(name="dgx-a", model="H100-SXM5-80GB", gpus=8, cores=112, memory_gib=2048)
    assert (n.name, n.model, n.gpus, n.cpu_millis, n.memory_mib) == (
        "dgx-a", "H100-SXM5-80GB", 8, 112000, 2048 * 1024)
    c = gs.cluster([n, gs.node(name="cpu-1", cores=32, memory_gib=64)])
    assert (c.node_count, c.gpu_count, c.free_gpus) == (2, 8, 8)
    assert c.node_name(1) == "cpu-1"
    assert c.node_free_gpus(0) == 8


def test_request_group_and_job_from_keywords():
    r = gs.request(gpus=2, cores=8, memory_gib=64)
    assert (r.kind, r.gpus, r.cpu_millis, r.memory_mib) == ("whole", 2, 8000, 65536)
    assert gs.request(share=0.25).share_milli == 250
    assert gs.request(mig=(3, 4)).mig == (3, 4)
    assert gs.request(replica=True).kind == "replica"
    g = gs.group(name="worker", request=r, count=4, min_count=2)
    assert (g.count, g.minimum, g.elastic) == (4, 2, True)
    j = gs.job(id=7, name="train", tenant=2, priority=5, submit_s=1.5, estimate_s=3600,
               groups=[g, gs.group(name="launcher", cores=1, memory_gib=1)])
    assert (j.id, j.name, j.tenant, j.priority, j.submit_s, j.estimate_s) == (
        7, "train", 2, 5, 1.5, 3600.0)
    assert (j.gpus, j.task_count, len(j.groups)) == (8, 5, 2)


def test_a_mig_profile_is_a_request():
    profiles = gs.mig_profiles("A100-SXM4-40GB")
    names = [p.name for p in profiles]
    assert "3g.20gb" in names and "7g.40gb" in names
    p = next(p for p in profiles if p.name == "3g.20gb")
    assert (p.compute_slices, p.memory_slices) == (3, 4)
    assert gs.request(mig=p).mig == (3, 4)
    assert gs.mig_profiles("T4") == []


def test_catalogs():
    basic = [m.name for m in gs.gpu_models()]
    assert "H100-SXM5-80GB" in basic and "V100-SXM2-32GB" in basic
    mig = gs.gpu_models(catalog="mig")
    assert all(m.supports_mig for m in mig)
    assert "H200-141GB" in [m.name for m in mig]


def test_a_bad_value_raises_the_library_message_naming_the_field():
    with pytest.raises(gs.InvalidValueError) as e:
        gs.job(id=7, name="train", groups=[gs.group(name="launcher", cores=1),
                                           gs.group(name="worker", gpus=17)])
    assert str(e.value) == ("[gpusched.invalid_value] job 7 'train' group 'worker': field "
                            "'gpu.count' = 17: must be 1..16 (whole GPUs on one node)")
    assert isinstance(e.value, ValueError) and isinstance(e.value, gs.Error)
    with pytest.raises(gs.InvalidValueError, match=r"\[gpusched.inconsistent\].*'min_count' = 3"):
        gs.job(id=8, groups=[gs.group(gpus=1, count=2, min_count=3)])
    with pytest.raises(gs.InvalidValueError, match=r"\[gpusched.unknown_name\] node 1 'x': field 'gpu_model' = B9000"):
        gs.cluster([gs.node(name="x", model="B9000", gpus=8, cores=8, memory_gib=8)])
    with pytest.raises(gs.InvalidValueError, match="share"):
        gs.request(share=1.5)
    with pytest.raises(gs.InvalidValueError, match="at most one of"):
        gs.request(gpus=1, share=0.5)
    with pytest.raises(gs.InvalidValueError, match="unknown_name"):
        gs.mig_profiles("B9000")


def test_topology_builders():
    t = gs.dgx1_v100()
    assert t.gpu_count == 8
    assert t.nvlinks(0, 3) >= 1 and t.nvlinks(0, 0) == 0
    assert gs.dgx_h100().gpu_count == 8
    assert gs.hgx(gpus=8, switches=4, links_per_switch=18, nvlink_gbps=25).gpu_count == 8
    assert gs.pcie_dual_socket_8gpu().nvlinks(0, 1) == 0
    model = gs.TopologyModel(gs.fat_tree(4, 2))
    h = model.add_node_type(t)
    assert h == 1
    nodes = [gs.node(name=f"n{i}", model="V100-SXM2-32GB", gpus=8, cores=40, memory_gib=512,
                     topology=h) for i in range(4)]
    model.check(gs.cluster(nodes))
    with pytest.raises(gs.InvalidValueError, match="fabric nodes"):
        model.check(gs.cluster(nodes[:3]))


TOPO = """\
\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity
GPU0\t X \tNV1\tSYS\tSYS\t0-19\t0
GPU1\tNV1\t X \tSYS\tSYS\t0-19\t0
GPU2\tSYS\tSYS\t X \tNV1\t20-39\t1
GPU3\tSYS\tSYS\tNV1\t X \t20-39\t1
"""


def test_nvidia_smi_topo_parser():
    m = gs.parse_nvidia_smi_topo(TOPO, name="box")
    assert m.topology.name == "box" and m.topology.gpu_count == 4
    assert m.topology.nvlinks(0, 1) == 1 and m.topology.nvlinks(0, 3) == 0
    assert m.numa == [0, 0, 1, 1]
    with pytest.raises(gs.ParseError, match=r"topo.txt:2"):
        gs.parse_nvidia_smi_topo(TOPO.replace("NV1\tSYS\tSYS\t0-19", "NV1\tXQ\tSYS\t0-19", 1),
                                 file="topo.txt")


def test_every_public_function_class_and_member_has_a_docstring():
    missing = []
    for name in gs.__all__:
        obj = getattr(gs, name)
        if not (callable(obj) or isinstance(obj, type)):
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if isinstance(obj, type) and not issubclass(obj, BaseException):
            for member in vars(obj):
                if member.startswith("_") and member not in ("__call__", "__init__"):
                    continue
                doc = getattr(vars(obj)[member], "__doc__", None)
                if not (doc or "").strip():
                    missing.append(f"{name}.{member}")
    assert missing == []


def test_every_public_function_class_and_method_has_a_docstring():
    import inspect
    missing = []
    for name in dir(gs):
        obj = getattr(gs, name)
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if callable(obj) and not (obj.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(obj):
            for member, value in vars(obj).items():
                if member.startswith("_"):
                    continue
                doc = (getattr(value, "__doc__", None) or "").strip()
                # pybind11 gives an undocumented method only its signature line.
                if not doc or (doc.startswith(member + "(") and "\n" not in doc):
                    missing.append(f"{name}.{member}")
    assert missing == []
