# Check and time state_scan.cu settings on one GPU without ksearch (for a machine where ksearch
# does not build): every setting is compiled with nvcc into a shared library behind a C entry,
# run on the task's check shapes (tasks/selective_scan/task.yaml: 2 seeds, float64 reference in
# torch, the task's atol/rtol/l2) and timed at b1 and b8 d2048 L2048 n16: median of 30 CUDA-event
# blocks of 10 back-to-back calls.  A line per setting: NAME:KERNEL.cu:A=1,B=2
#   python3 bench/probes/state_scan_probe.py SETTINGS_FILE [--quick]   (--quick: first 4 checks)
#   python3 bench/probes/state_scan_probe.py SETTINGS_FILE --once   (one b1 d2048 L2048 call per
#       setting, nothing else: for a profiler, bench/probes/scan_profile.sh)
#   python3 bench/probes/state_scan_probe.py SETTINGS_FILE --flush   (b1 d2048 L2048 only, single
#       calls timed three ways: L2 warm; L2 zeroed before each call, as selective_scan.py does,
#       which leaves it full of dirty lines; zeroed and then another buffer read, so that the
#       L2 is cold but clean: the second minus the third is the write-back of the flush's lines
#       during the kernel)
import ctypes,subprocess,sys,os,tempfile
try: import torch
except ImportError: sys.exit('state_scan_probe.py: needs torch with CUDA and an NVIDIA GPU (pip install torch)')
if len(sys.argv)<2 or not os.path.isfile(sys.argv[1]): sys.exit('usage: python3 bench/probes/state_scan_probe.py SETTINGS_FILE [--quick|--once|--flush] (see the comment at the top)')
S=tempfile.mkdtemp()
def build(f,defs,n):
    open(f'{S}/w_{n}.cu','w').write(f'#include "{os.path.abspath(f)}"\nextern "C" void ks_entry(const __half*u,const __half*dl,const float*A,const __half*B,const __half*C,const float*D,const __half*z,const float*db,__half*y,int b,int d,int l,int n){{selective_scan(u,dl,A,B,C,D,z,db,y,b,d,l,n,0);}}\n')
    r=subprocess.run(['nvcc','-O3','-std=c++17','-gencode','arch=compute_90a,code=sm_90a','-shared','-Xcompiler','-fPIC','-o',f'{S}/{n}.so',f'{S}/w_{n}.cu']+['-D'+x for x in defs.split(',')],capture_output=True,text=True)
    if r.returncode: print(r.stderr[-800:]); return None
    return ctypes.CDLL(f'{S}/{n}.so').ks_entry
def inputs(b,d,l,n,Aexp=(0,1),bias=None,g=None):
    g=torch.Generator(device='cuda').manual_seed(g)
    nr=lambda *s:torch.randn(*s,device='cuda',generator=g)
    u,dl,z=[nr(b,d,l).half() for _ in range(3)]
    A=-torch.exp(nr(d,n)*Aexp[1]+Aexp[0]); B=nr(b,n,l).half(); C=nr(b,n,l).half()
    D=torch.rand(d,device='cuda',generator=g)+0.5
    db=torch.rand(d,device='cuda',generator=g)*3-4 if bias is None else torch.full((d,),float(bias),device='cuda')
    return u,dl,A,B,C,D,z,db
def ref(u,dl,A,B,C,D,z,db):
    u,dl,z,B,C=[x.double() for x in (u,dl,z,B,C)];A=A.double();dt=torch.nn.functional.softplus(dl+db.double()[None,:,None])
    h=torch.zeros(u.shape[0],u.shape[1],A.shape[1],device='cuda',dtype=torch.float64);ys=[]
    for t in range(u.shape[2]):
        h=torch.exp(dt[:,:,t,None]*A)*h+(dt[:,:,t]*u[:,:,t])[:,:,None]*B[:,None,:,t];ys.append((h*C[:,None,:,t]).sum(-1))
    y=torch.stack(ys,-1)+D.double()[None,:,None]*u
    return (y*z*torch.sigmoid(z)).half()
def call(k,x,y):
    p=[ctypes.c_void_p(t.data_ptr()) for t in x]; b,d,l=x[0].shape
    k(*p[:8],ctypes.c_void_p(y.data_ptr()),b,d,l,x[3].shape[1])
RC={}
def check(k,b,d,l,n,**kw):
    worst=0
    for s in range(2):
        x=inputs(b,d,l,n,g=s,**kw);key=(b,d,l,n,s,str(kw))
        if key not in RC: RC[key]=ref(*x).double()
        r=RC[key];y=torch.full_like(x[0],float('nan'));call(k,x,y);torch.cuda.synchronize();e=(y.double()-r).abs()
        bad=(e>3e-3+2e-2*r.abs())|y.isnan();l2=((y.double()-r).norm()/r.norm()).item()
        if bad.any() or l2>5e-3: return f'FAIL({bad.sum().item()} l2={l2:.1e})'
        worst=max(worst,e.max().item())
    return f'ok{worst:.0e}'
def tm(k,b,d,l,n=16):
    x=inputs(b,d,l,n,g=0);y=torch.empty_like(x[0])
    for _ in range(3):call(k,x,y)
    ts=[]
    for _ in range(30):
        e0,e1=torch.cuda.Event(True),torch.cuda.Event(True);e0.record();[call(k,x,y) for _ in range(10)];e1.record();e1.synchronize();ts.append(e0.elapsed_time(e1)*1e2)
    return sorted(ts)[15]
def tm_flush(k,mode,reps=50):
    x=inputs(1,2048,2048,16,g=0);y=torch.empty_like(x[0]);l2=torch.cuda.get_device_properties(0).L2_cache_size
    fz,fr=torch.empty(2*l2//4,device='cuda'),torch.ones(2*l2//4,device='cuda')
    for _ in range(3):call(k,x,y)
    ts=[]
    for _ in range(reps):
        if mode!='warm': fz.zero_()
        if mode=='clean': fr.sum()
        e0,e1=torch.cuda.Event(True),torch.cuda.Event(True);e0.record();call(k,x,y);e1.record();e1.synchronize();ts.append(e0.elapsed_time(e1)*1e3)
    return sorted(ts)[reps//2]
CH=[(2,8,1,16,{}),(1,4,4096,16,{}),(2,24,77,16,{}),(1,19,100,5,{}),(1,16,2000,16,{'bias':-7}),(1,16,64,16,{'bias':25}),(1,40,32768,16,{'bias':-6}),(2,72,1500,16,{'Aexp':(3,1),'bias':3}),(3,37,4099,16,{}),(1,2048,2048,16,{})]
R=sys.stdout
from concurrent.futures import ThreadPoolExecutor
L=[l.split(':') for l in open(sys.argv[1]).read().split()]
with ThreadPoolExecutor(16) as ex: ks=list(ex.map(lambda a:build(a[1],a[2],a[0]),L))
print('built',flush=True)
if '--once' in sys.argv:
    x=inputs(1,2048,2048,16,g=0);y=torch.empty_like(x[0])
    for (n,f,d),k in zip(L,ks):
        if k: call(k,x,y);torch.cuda.synchronize();print(n,'ran once',flush=True)
    sys.exit(0)
if '--flush' in sys.argv:
    for r in range(3):
        for (n,f,d),k in zip(L,ks):
            if k: print(n,'b1 us: '+', '.join(f'{m} {tm_flush(k,m):.1f}' for m in ('warm','zeroed','clean')),flush=True)
    sys.exit(0)
for (n,f,d),k in zip(L,ks):
    if not k: print(n,'COMPILE FAIL',flush=True);continue
    t1=tm(k,1,2048,2048);t8=tm(k,8,2048,2048);ck=' '.join(check(k,*c[:4],**c[4]) for c in (CH if '--quick' not in sys.argv else CH[:4]))
    print(f'{n} b1 {t1:.1f}us b8 {t8:.1f}us | {ck}',flush=True)
