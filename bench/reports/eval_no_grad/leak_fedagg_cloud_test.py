# Source: https://github.com/wuzhiyuan2000/FedAgg/issues/2
# Report: the issue asks why FedAgg's testing phase (test_on_cloud) and the teacher in the distillation phase run without model.eval() / torch.no_grad()
# Shape: test_on_cloud runs the cloud model over the global test loader every communication round with grad enabled; each batch's forward saves activations for a backward that never comes
# Expect: TML003 line 38
import torch
import torch.nn as nn
import torch.nn.functional as F


class RunningAverage:
    def __init__(self):
        self.steps = 0
        self.total = 0.0

    def update(self, val):
        self.total += val
        self.steps += 1

    def value(self):
        return self.total / float(self.steps)


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    _, pred = output.topk(maxk, 1, True, True)
    correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
    res = []
    for k in topk:
        res.append(correct[:k].reshape(-1).float().sum(0) * (100.0 / target.size(0)))
    return res


def test_on_cloud(cloud_model, test_data_global, comm_round):
    top1 = RunningAverage()
    top5 = RunningAverage()
    for images, labels in test_data_global:
        images, labels = images.cuda(), labels.cuda().long()
        log_probs, _ = cloud_model(images)  # expect: TML003
        acc1, acc5 = accuracy(log_probs, labels, topk=(1, 5))
        top1.update(acc1.item())
        top5.update(acc5.item())
    print("Test/AccTop1 in comm_round", comm_round, top1.value(), top5.value())


class KDLoss(nn.Module):
    def __init__(self, temperature=1.0, alpha=10.0):
        super().__init__()
        self.T = temperature
        self.alpha = alpha
        self.ce = nn.CrossEntropyLoss()

    def forward(self, student_logits, teacher_logits, label):
        p_t = F.softmax(teacher_logits.detach() / self.T, dim=1) + 1e-7
        kl = self.T * self.T * F.kl_div(F.log_softmax(student_logits / self.T, dim=1), p_t, reduction="batchmean")
        return self.ce(student_logits, label) + self.alpha * kl


def distill_direction(student, teacher, decoder, noises, labels, lr, temperature):
    crit = KDLoss(temperature)
    optimizer = torch.optim.SGD(student.parameters(), lr=lr, momentum=0.9)
    for noise, label in zip(noises, labels):
        optimizer.zero_grad()
        fake = decoder(noise)
        teacher_logits, _ = teacher(fake)
        student_logits, _ = student(fake)
        loss = crit(student_logits, teacher_logits, label.long())
        loss.backward()
        optimizer.step()


def run_fedagg(cloud, edges, decoder, noises, labels, test_data_global, args):
    for comm_round in range(args.comm_round):
        for edge in edges:
            distill_direction(edge, cloud, decoder, noises, labels, args.lr, args.T_agg)
            distill_direction(cloud, edge, decoder, noises, labels, args.lr, args.T_agg)
        test_on_cloud(cloud, test_data_global, comm_round)
