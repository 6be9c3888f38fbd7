# Modelled on: http://www.kouhan.cn/en/article/00034093
# Report: the fixed inference script disables autograd for the whole loop.
import torch as T
from PIL import Image
from torchvision import transforms

model = T.hub.load("pytorch/vision", "resnet50", weights="DEFAULT").cuda()
model.eval()
tf = transforms.Compose([transforms.Resize((300, 300)), transforms.ToTensor()])

results = {}
with T.inference_mode():
    for path in ["a.jpg", "b.jpg", "c.jpg"]:
        img = tf(Image.open(path)).unsqueeze(0).cuda()
        logits = model(img)
        results[path] = int(logits.argmax())
