# Source: https://github.com/karpenet/quantization-aware-distillation/blob/main/distillation.py
# Report: SegFormer b4->b0 distillation (optionally QAT-prepared student); validation upsamples the student logits to label size and feeds the argmax maps to a mean-IoU metric
# Shape: the validation loop keeps every batch's full-resolution prediction map and label map on the GPU in lists that live for the whole loop, and computes the metric once at the end
# Expect: TML004 lines 69, 70
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import evaluate


class DistillationLoss(nn.Module):
    def __init__(self, temperature=3.0, alpha=0.5):
        super().__init__()
        self.temperature = temperature
        self.alpha = alpha
        self.kl = nn.KLDivLoss(reduction="batchmean")
        self.ce = nn.CrossEntropyLoss(ignore_index=255)

    def forward(self, student_logits, teacher_logits, labels):
        log_student = F.log_softmax(student_logits / self.temperature, dim=1)
        soft_teacher = F.softmax(teacher_logits / self.temperature, dim=1)
        upsampled = F.interpolate(student_logits, size=labels.shape[-2:], mode="bilinear", align_corners=False)
        return self.alpha * self.ce(upsampled, labels.long()) + (1 - self.alpha) * self.kl(log_student, soft_teacher)


class SegDistiller:
    def __init__(self, config, teacher, student, train_loader, val_loader):
        self.config = config
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.teacher = teacher.to(self.device).eval()
        self.student = student.to(self.device)
        self.train_loader = train_loader
        self.val_loader = val_loader
        self.optimizer = optim.AdamW(self.student.parameters(), lr=config.learning_rate)
        self.criterion = DistillationLoss(config.temperature, config.alpha)

    def train(self):
        for epoch in range(self.config.num_epochs):
            total_loss = 0.0
            self.student.train()
            for batch in self.train_loader:
                images = batch["pixel_values"].to(self.device)
                labels = batch["labels"].to(self.device)
                with torch.no_grad():
                    teacher_out = self.teacher(images)
                student_out = self.student(images)
                loss = self.criterion(student_out.logits, teacher_out.logits, labels)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total_loss += loss.item()
            metrics = self.validate()
            print(epoch, total_loss / len(self.train_loader), metrics["mean_iou"])
        torch.save(self.student.state_dict(), self.config.weights_file)

    def validate(self):
        metric = evaluate.load("mean_iou")
        self.student.eval()
        all_preds = []
        all_labels = []
        for batch in self.val_loader:
            images = batch["pixel_values"].to(self.device)
            labels = batch["labels"].to(self.device)
            with torch.no_grad():
                logits = self.student(images).logits
                upsampled = F.interpolate(logits, size=labels.shape[-2:], mode="bilinear", align_corners=False)
                predicted = upsampled.argmax(dim=1)
            all_preds.append(predicted)  # expect: TML004
            all_labels.append(labels)  # expect: TML004
        preds = torch.cat(all_preds).cpu().numpy()
        refs = torch.cat(all_labels).cpu().numpy()
        return metric.compute(predictions=preds, references=refs, num_labels=150,
                              ignore_index=255, reduce_labels=False)
