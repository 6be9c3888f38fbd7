# Modelled on: http://www.kouhan.cn/en/article/00034093
# Report: inference with batch size 1 on 300x300 images ran out of memory after 25 images; empty_cache did not help, no_grad did.
import torch as T
from PIL import Image
from torchvision import transforms

model = T.hub.load("pytorch/vision", "resnet50", weights="DEFAULT").cuda()
model.eval()
tf = transforms.Compose([transforms.Resize((300, 300)), transforms.ToTensor()])

results = {}
for path in ["a.jpg", "b.jpg", "c.jpg"]:
    img = tf(Image.open(path)).unsqueeze(0).cuda()
    logits = model(img)  # expect: TML003
    results[path] = int(logits.argmax())
