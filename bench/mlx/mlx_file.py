"""What bench/mlx's tools read from a task folder and an MLX kernel file (.mlx), with the
same patterns: the task's params and tensors in order, a file's knob defaults."""
import os
import re


def task_decl(task_dir):
    """(params [(name, dtype)], tensors [(name, dtype, is_output)]) of a task, in its order"""
    text = open(os.path.join(task_dir, "task.yaml")).read()
    m = re.search(r"^params:\s*\{(.*)\}", text, re.M)
    params = re.findall(r"(\w+):\s*(\w+)", m.group(1)) if m else []
    tensors = []
    for section in ("inputs", "outputs"):
        m = re.search(r"^%s:\n((?:  .*\n)+)" % section, text, re.M)
        for name, dt in re.findall(r"^\s+(\w+):\s*\{dtype:\s*(\w+)", m.group(1) if m else "", re.M):
            tensors.append((name, dt, section == "outputs"))
    return params, tensors


def knob_defaults(text):
    """(name, default) of each knob in the file's @ksearch block"""
    return re.findall(r"^\s+(\w+):\s*\{values:\s*\[[^]]*\],\s*default:\s*([^,}\s]+)", text, re.M)
