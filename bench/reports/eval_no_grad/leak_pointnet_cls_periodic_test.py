# Source: https://github.com/fxia22/pointnet.pytorch/blob/master/utils/train_classification.py
# Report: PointNet classification script switches the classifier to eval() every 10 batches and again for the final test pass, but forwards test point clouds with autograd on (no torch.no_grad anywhere)
# Shape: module-level loop; the periodic test block and the final test loop call classifier(points) after classifier.eval() with no backward and no grad-disabled context, so each test forward saves its T-Net/conv activations for a backward that never comes (higher peak per test batch)
# Expect: TML003 lines 78, 92
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import torch.utils.data


class PointNetCls(nn.Module):
    def __init__(self, k=16, feature_transform=False):
        super().__init__()
        self.feature_transform = feature_transform
        self.conv1 = nn.Conv1d(3, 64, 1)
        self.conv2 = nn.Conv1d(64, 1024, 1)
        self.fstn = nn.Linear(64, 64 * 64)
        self.head = nn.Sequential(nn.Linear(1024, 256), nn.ReLU(), nn.Linear(256, k))

    def forward(self, x):
        x = F.relu(self.conv1(x))
        trans_feat = None
        if self.feature_transform:
            trans_feat = self.fstn(x.max(dim=2)[0]).view(-1, 64, 64)
            x = torch.bmm(x.transpose(2, 1), trans_feat).transpose(2, 1)
        x = self.conv2(x).max(dim=2)[0]
        return F.log_softmax(self.head(x), dim=1), None, trans_feat


def feature_transform_regularizer(trans):
    d = trans.size(1)
    eye = torch.eye(d, device=trans.device)[None]
    return torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - eye, dim=(1, 2)))


parser = argparse.ArgumentParser()
parser.add_argument("--batchSize", type=int, default=32)
parser.add_argument("--nepoch", type=int, default=250)
parser.add_argument("--feature_transform", action="store_true")
opt = parser.parse_args()

dataset = torch.utils.data.TensorDataset(torch.randn(2048, 2500, 3), torch.randint(0, 16, (2048, 1)))
test_dataset = torch.utils.data.TensorDataset(torch.randn(512, 2500, 3), torch.randint(0, 16, (512, 1)))
dataloader = torch.utils.data.DataLoader(dataset, batch_size=opt.batchSize, shuffle=True, num_workers=4)
testdataloader = torch.utils.data.DataLoader(test_dataset, batch_size=opt.batchSize, shuffle=True, num_workers=4)

classifier = PointNetCls(k=16, feature_transform=opt.feature_transform)
optimizer = optim.Adam(classifier.parameters(), lr=0.001, betas=(0.9, 0.999))
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
classifier.cuda()
num_batch = len(dataset) / opt.batchSize

for epoch in range(opt.nepoch):
    for i, data in enumerate(dataloader, 0):
        points, target = data
        target = target[:, 0]
        points, target = points.transpose(2, 1).cuda(), target.cuda()
        optimizer.zero_grad()
        classifier = classifier.train()
        pred, trans, trans_feat = classifier(points)
        loss = F.nll_loss(pred, target)
        if opt.feature_transform:
            loss += feature_transform_regularizer(trans_feat) * 0.001
        loss.backward()
        optimizer.step()
        correct = pred.data.max(1)[1].eq(target.data).cpu().sum()
        print("[%d: %d/%d] train loss: %f accuracy: %f" % (epoch, i, num_batch, loss.item(), correct.item() / float(opt.batchSize)))

        if i % 10 == 0:
            j, data = next(enumerate(testdataloader, 0))
            points, target = data
            target = target[:, 0]
            points, target = points.transpose(2, 1).cuda(), target.cuda()
            classifier = classifier.eval()
            pred, _, _ = classifier(points)  # expect: TML003
            loss = F.nll_loss(pred, target)
            correct = pred.data.max(1)[1].eq(target.data).cpu().sum()
            print("[%d: %d/%d] test loss: %f accuracy: %f" % (epoch, i, num_batch, loss.item(), correct.item() / float(opt.batchSize)))
    scheduler.step()
    torch.save(classifier.state_dict(), "cls/cls_model_%d.pth" % epoch)

total_correct = 0
total_testset = 0
for i, data in enumerate(testdataloader, 0):
    points, target = data
    target = target[:, 0]
    points, target = points.transpose(2, 1).cuda(), target.cuda()
    classifier = classifier.eval()
    pred, _, _ = classifier(points)  # expect: TML003
    correct = pred.data.max(1)[1].eq(target.data).cpu().sum()
    total_correct += correct.item()
    total_testset += points.size()[0]

print("final accuracy {}".format(total_correct / float(total_testset)))
