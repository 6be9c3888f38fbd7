# Source: https://github.com/yzd-v/FGD/blob/04900add42feb796392807eed7024ec895b32f28/mmdet/distillation/distillers/detection_distiller.py
# Report: FGD (focal and global distillation for detectors, mmdet): DetectionDistiller captures teacher and student FPN features with forward hooks whose closures write the output into a named buffer on the distiller; the hooks are registered once, in __init__ (the maintainer explains the hook mechanism in issue #61)
# Shape: repository code with the safeguard removed: the hook registration is moved from __init__ into train_step, which mmcv's runner calls once per iteration, on the persistent teacher/student submodules, and the returned handles are dropped (never .remove()d), so each step adds two more closures per distilled layer
# Expect: TML007 line 66; TML007 line 67
import torch
import torch.nn as nn
from mmcv.runner import load_checkpoint
from mmdet.models import build_detector
from mmdet.models.detectors.base import BaseDetector

from ..builder import DISTILLER, build_distill_loss


@DISTILLER.register_module()
class DetectionDistiller(BaseDetector):
    """Teacher/student distiller for detectors (features captured by hooks)."""

    def __init__(self, teacher_cfg, student_cfg, distill_cfg=None, teacher_pretrained=None):
        super(DetectionDistiller, self).__init__()
        self.teacher = build_detector(teacher_cfg.model, train_cfg=teacher_cfg.get("train_cfg"),
                                      test_cfg=teacher_cfg.get("test_cfg"))
        load_checkpoint(self.teacher, teacher_pretrained, map_location="cpu")
        self.teacher.eval()
        self.student = build_detector(student_cfg.model, train_cfg=student_cfg.get("train_cfg"),
                                      test_cfg=student_cfg.get("test_cfg"))
        self.distill_cfg = distill_cfg
        self.distill_losses = nn.ModuleDict()
        for item_loc in distill_cfg:
            student_module = "student_" + item_loc.student_module.replace(".", "_")
            teacher_module = "teacher_" + item_loc.teacher_module.replace(".", "_")
            self.register_buffer(student_module, None)
            self.register_buffer(teacher_module, None)
            for item_loss in item_loc.methods:
                self.distill_losses[item_loss.name] = build_distill_loss(item_loss)

    def _make_hooks(self, student_module, teacher_module):
        def hook_teacher_forward(module, input, output):
            self.register_buffer(teacher_module, output)

        def hook_student_forward(module, input, output):
            self.register_buffer(student_module, output)

        return hook_teacher_forward, hook_student_forward

    def forward_train(self, img, img_metas, **kwargs):
        with torch.no_grad():
            self.teacher.eval()
            self.teacher.extract_feat(img)
        student_loss = self.student.forward_train(img, img_metas, **kwargs)
        buffer_dict = dict(self.named_buffers())
        for item_loc in self.distill_cfg:
            student_feat = buffer_dict["student_" + item_loc.student_module.replace(".", "_")]
            teacher_feat = buffer_dict["teacher_" + item_loc.teacher_module.replace(".", "_")]
            for item_loss in item_loc.methods:
                student_loss[item_loss.name] = self.distill_losses[item_loss.name](
                    student_feat, teacher_feat, kwargs["gt_bboxes"], img_metas)
        return student_loss

    def train_step(self, data, optimizer):
        student_modules = dict(self.student.named_modules())
        teacher_modules = dict(self.teacher.named_modules())
        for item_loc in self.distill_cfg:
            hook_teacher, hook_student = self._make_hooks(
                "student_" + item_loc.student_module.replace(".", "_"),
                "teacher_" + item_loc.teacher_module.replace(".", "_"))
            teacher_modules[item_loc.teacher_module].register_forward_hook(hook_teacher)  # expect: TML007
            student_modules[item_loc.student_module].register_forward_hook(hook_student)  # expect: TML007
        losses = self(**data)
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data["img_metas"]))

    def simple_test(self, img, img_metas, **kwargs):
        return self.student.simple_test(img, img_metas, **kwargs)

    def extract_feat(self, imgs):
        return self.student.extract_feat(imgs)
