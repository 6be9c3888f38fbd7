# Source: https://github.com/limingcv/Photorealistic-Style-Transfer/issues/7
# Report: photorealistic style transfer training hit "backward through the graph a second time"; after switching to backward(retain_graph=True) the 12 GB GPU runs out of memory
# Shape: per-step loop keeps the loss tensors for the loss curves in lists created before the loop, and backward(retain_graph=True) keeps every step's graph buffers alive through them
# Expect: TML006 line 59; TML001 line 55; TML001 line 56; TML001 line 57
import torch
import torch.optim as optim
from torchvision import models

import HRNet
import utils

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

vgg = models.vgg19(pretrained=True).features.to(device)
for p in vgg.parameters():
    p.requires_grad_(False)

style_net = HRNet.HRNet().to(device)

content_image = utils.load_image("./content.png", img_size=500).to(device)
style_image = utils.load_image("./style.png").to(device)

content_features = utils.get_features(content_image, vgg)
style_features = utils.get_features(style_image, vgg)
style_grams = {layer: utils.gram_matrix(style_features[layer]) for layer in style_features}

style_weights = {"conv1_1": 0.1, "conv2_1": 0.2, "conv3_1": 0.4, "conv4_1": 0.8, "conv5_1": 1.6}
content_weight, style_weight = 150, 1

optimizer = optim.Adam(style_net.parameters(), lr=5e-3)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=200, gamma=0.9)

content_loss_epoch = []
style_loss_epoch = []
total_loss_epoch = []
output_image = content_image


def style_loss_of(target_features):
    loss = 0
    for layer, w in style_weights.items():
        feat = target_features[layer]
        _, c, h, w_ = feat.shape
        loss = loss + w * torch.mean((utils.gram_matrix(feat) - style_grams[layer]) ** 2) / (c * h * w_)
    return loss


for epoch in range(1001):
    target = style_net(content_image)
    target_features = utils.get_features(target, vgg)
    content_loss = torch.mean((target_features["conv4_2"] - content_features["conv4_2"]) ** 2)
    style_loss = style_loss_of(target_features)
    total_loss = content_weight * content_loss + style_weight * style_loss

    total_loss_epoch.append(total_loss)  # expect: TML001
    style_loss_epoch.append(style_weight * style_loss)  # expect: TML001
    content_loss_epoch.append(content_weight * content_loss)  # expect: TML001
    optimizer.zero_grad()
    total_loss.backward(retain_graph=True)  # expect: TML006
    optimizer.step()
    scheduler.step()

    if epoch % 100 == 0:
        print(f"step {epoch}: total {total_loss.item():.4f}")
    output_image = target

utils.plot_curves(total_loss_epoch, style_loss_epoch, content_loss_epoch)
